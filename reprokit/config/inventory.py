"""``inventory.yml``: Ansible's YAML inventory, loaded once into typed host records.

The same file drives ``ansible-playbook -i inventory.yml`` and reprokit's own
SSH connections, so it uses Ansible's shape (``all`` -> ``hosts`` / ``vars`` /
``children``) and Ansible's variable names for the connection
(``ansible_host``, ``ansible_port``, ``ansible_user``, ...). Variables are
merged like Ansible does: ``all.vars`` < parent group < child group < host.

A built-in host named ``local`` (the machine itself, native runtime) is always
present and is the default target.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pydantic

from reprokit.config.validation import describe_first_error
from reprokit.config.yamlfile import LoadedYaml, PathKey, load_yaml
from reprokit.errors import ConfigError

LOCAL_HOST = "local"
GPU_ARCHES = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")


class HostVars(pydantic.BaseModel):
    """Every variable a host may carry after merging; unknown keys are rejected."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    ansible_host: str | None = None
    ansible_port: int = pydantic.Field(22, ge=1, le=65535)
    ansible_user: str | None = None
    ansible_connection: Literal["ssh", "local"] = "ssh"
    ansible_ssh_private_key_file: str | None = None
    ansible_python_interpreter: str | None = None
    ansible_become: bool | None = None
    # reprokit's own host facts
    gpu_arch: str | None = None
    gpu_count: int | None = pydantic.Field(None, ge=0)
    runtime: Literal["docker", "native"] = "docker"
    cpu_only: bool = False
    proxy_jump: str | None = None
    workdir: str = "/var/lib/reprokit"
    connect_timeout_s: float = pydantic.Field(10.0, gt=0)
    # docker runtime: what `docker run` asks for (NCCL and pinned host memory want memlock unlimited)
    container_ulimits: dict[str, int] = {"memlock": -1, "stack": 67108864}
    container_shm_size: str = pydantic.Field("16g", pattern=r"^[0-9]+[bkmg]?$")

    @pydantic.field_validator("gpu_arch")
    @classmethod
    def _arch_known(cls, value: str | None) -> str | None:
        if value is not None and value not in GPU_ARCHES:
            raise ValueError(f"unknown gpu_arch {value!r}; use one of {', '.join(GPU_ARCHES)}")
        return value


@dataclass(frozen=True)
class Host:
    """One target machine, as both Fabric and Ansible see it."""

    name: str
    connection: Literal["ssh", "local"]
    address: str | None
    port: int
    user: str | None
    runtime: Literal["docker", "native"]
    gpu_arch: str | None
    gpu_count: int | None
    cpu_only: bool
    groups: tuple[str, ...]
    python: str
    workdir: str
    key_file: str | None = None
    proxy_jump: str | None = None
    connect_timeout_s: float = 10.0
    container_ulimits: tuple[tuple[str, int], ...] = (("memlock", -1), ("stack", 67108864))
    container_shm_size: str = "16g"
    source: str = "built-in"  # file:line where the host is defined

    @property
    def is_local(self) -> bool:
        return self.connection == "local"

    def describe(self) -> dict[str, Any]:
        """What the run manifest records of the host (no secrets: key paths only)."""
        return {
            "name": self.name,
            "connection": self.connection,
            "address": self.address,
            "port": self.port if self.connection == "ssh" else None,
            "user": self.user,
            "runtime": self.runtime,
            "gpu_arch": self.gpu_arch,
            "gpu_count": self.gpu_count,
            "cpu_only": self.cpu_only,
            "groups": list(self.groups),
            "source": self.source,
        }


def local_host() -> Host:
    """The embedded default: this machine, workloads run natively with this Python."""
    return Host(
        name=LOCAL_HOST,
        connection="local",
        address=None,
        port=0,
        user=None,
        runtime="native",
        gpu_arch=None,
        gpu_count=None,
        cpu_only=False,
        groups=(),
        python=sys.executable,
        workdir="runs",
    )


@dataclass
class Inventory:
    path: Path | None
    hosts: dict[str, Host] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)

    def host(self, name: str | None) -> Host:
        """The host called ``name`` (``None`` -> ``local``), or a ConfigError listing the known ones."""
        name = name or LOCAL_HOST
        if name in self.hosts:
            return self.hosts[name]
        known = ", ".join(sorted(self.hosts))
        hint = difflib.get_close_matches(name, self.hosts, n=1)
        did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        where = self.path or "inventory"
        raise ConfigError(f"{where}: unknown host '{name}'{did_you_mean}; known hosts: {known}")

    def group(self, name: str) -> list[Host]:
        if name not in self.groups:
            known = ", ".join(sorted(self.groups)) or "(none)"
            raise ConfigError(f"{self.path or 'inventory'}: unknown group '{name}'; known groups: {known}")
        return [self.hosts[h] for h in self.groups[name]]


_GROUP_KEYS = ("hosts", "vars", "children")


def _check_group_keys(doc: LoadedYaml, node: Any, loc: PathKey) -> None:
    if node is None:
        return
    if not isinstance(node, dict):
        raise ConfigError(f"{doc.where(loc)}: group '{loc[-1]}' must be a mapping with hosts/vars/children")
    for key in node:
        if key not in _GROUP_KEYS:
            raise ConfigError(
                f"{doc.where(loc + (key,))}: unknown key '{key}' in group '{loc[-1]}'; known keys here: {', '.join(_GROUP_KEYS)}"
            )
    for key in ("hosts", "vars", "children"):
        value = node.get(key)
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"{doc.where(loc + (key,))}: '{key}' of group '{loc[-1]}' must be a mapping")


def load_inventory(path: Path | str | None) -> Inventory:
    """Load ``inventory.yml``; a missing file gives an inventory with only ``local``."""
    inventory = Inventory(path=Path(path) if path else None)
    inventory.hosts[LOCAL_HOST] = local_host()
    if path is None or not Path(path).exists():
        return inventory
    doc = load_yaml(path)
    if doc.data is None:
        return inventory
    if not isinstance(doc.data, dict) or set(doc.data) != {"all"}:
        extra = sorted(set(doc.data) - {"all"}) if isinstance(doc.data, dict) else []
        detail = f"unknown top-level key '{extra[0]}'" if extra else "expected a mapping with the single key 'all'"
        loc: PathKey = (extra[0],) if extra else ()
        raise ConfigError(f"{doc.where(loc)}: {detail}; an Ansible YAML inventory starts with 'all:'")

    host_vars: dict[str, list[tuple[PathKey, dict[str, Any]]]] = {}
    host_loc: dict[str, PathKey] = {}
    host_groups: dict[str, list[str]] = {}

    def walk(group: str, node: Any, loc: PathKey, inherited: list[tuple[PathKey, dict[str, Any]]]) -> list[str]:
        _check_group_keys(doc, node, loc)
        node = node or {}
        layers = list(inherited)
        if node.get("vars"):
            layers.append((loc + ("vars",), node["vars"]))
        members: list[str] = []
        for host_name, own in (node.get("hosts") or {}).items():
            hloc = loc + ("hosts", host_name)
            if host_name == LOCAL_HOST:
                raise ConfigError(f"{doc.where(hloc)}: host name '{LOCAL_HOST}' is reserved for this machine; rename it")
            if own is not None and not isinstance(own, dict):
                raise ConfigError(f"{doc.where(hloc)}: host '{host_name}' must map to its variables (or be empty)")
            if host_name in host_loc and own:
                first = doc.line_of(host_loc[host_name])
                raise ConfigError(
                    f"{doc.where(hloc)}: host '{host_name}' is given variables twice (first on line {first});"
                    " define its variables once and list it without variables elsewhere"
                )
            chain = host_vars.setdefault(host_name, [])
            if own or host_name not in host_loc:
                host_loc[host_name] = hloc
            chain.extend(layer for layer in layers if layer not in chain)
            if own:
                chain.append((hloc, own))
            members.append(host_name)
            host_groups.setdefault(host_name, [])
            if group != "all" and group not in host_groups[host_name]:
                host_groups[host_name].append(group)
        for child, child_node in (node.get("children") or {}).items():
            child_members = walk(child, child_node, loc + ("children", child), layers)
            inventory.groups.setdefault(child, [])
            for m in child_members:
                if m not in inventory.groups[child]:
                    inventory.groups[child].append(m)
                if group != "all" and group not in host_groups[m]:
                    host_groups[m].append(group)
            members.extend(m for m in child_members if m not in members)
        return members

    all_members = walk("all", doc.data["all"], ("all",), [])
    inventory.groups["all"] = [LOCAL_HOST] + all_members

    for name, chain in host_vars.items():
        merged: dict[str, Any] = {}
        origin: dict[str, PathKey] = {}
        for loc, layer in chain:
            for key, value in layer.items():
                merged[key] = value
                origin[key] = loc + (key,)
        try:
            hv = HostVars.model_validate(merged)
        except pydantic.ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            key = str(err["loc"][0]) if err["loc"] else ""
            base = origin.get(key, host_loc[name])[:-1] if key in origin else host_loc[name]
            raise ConfigError(describe_first_error(HostVars, exc, doc, base, f"host '{name}': ", field_from_base=False)) from None
        if hv.ansible_connection == "ssh" and not hv.ansible_host:
            address = name  # Ansible falls back to the inventory name as the address
        else:
            address = hv.ansible_host
        inventory.hosts[name] = Host(
            name=name,
            connection=hv.ansible_connection,
            address=address,
            port=hv.ansible_port,
            user=hv.ansible_user,
            runtime=hv.runtime if hv.ansible_connection == "ssh" else hv.runtime,
            gpu_arch=hv.gpu_arch,
            gpu_count=hv.gpu_count,
            cpu_only=hv.cpu_only,
            groups=tuple(host_groups.get(name, ())),
            python=hv.ansible_python_interpreter or "python3",
            workdir=hv.workdir,
            key_file=hv.ansible_ssh_private_key_file,
            proxy_jump=hv.proxy_jump,
            connect_timeout_s=hv.connect_timeout_s,
            container_ulimits=tuple(hv.container_ulimits.items()),
            container_shm_size=hv.container_shm_size,
            source=doc.where(host_loc[name]),
        )
    for group in inventory.groups:
        if group in inventory.hosts:
            raise ConfigError(f"{path}: '{group}' is both a group and a host name; rename one")
    return inventory
