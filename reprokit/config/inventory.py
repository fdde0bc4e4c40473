"""The inventory: any inventory Ansible accepts, loaded once into typed host records.

The same inventory drives ``ansible-playbook`` and reprokit's own SSH connections. Ansible reads it
(``ansible-inventory --list``, ``reprokit.config.ansible_inventory``): YAML or INI, directories,
``group_vars/`` and ``host_vars/``; reprokit then validates only its own variables and the connection
variables it uses, and leaves every other variable to Ansible (a name close to one of reprokit's is
warned about). ansible-core is one of reprokit's dependencies: there is no second reader to disagree with it.

A built-in host named ``local`` (the machine itself, native runtime) is always
present and is the default target.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from reprokit.config import ansible_inventory
from reprokit.config.names import check_name
from reprokit.config.yamlfile import LoadedYaml, load_yaml
from reprokit.errors import ConfigError
from reprokit.workloads.facts.arch import GPU_ARCHES

LOCAL_HOST = "local"
SLURM_QUEUE_WAIT_S = 3600.0  # a job pending this long is cancelled unless slurm_max_queue_wait_s says otherwise
SLURM_NAME = r"^[A-Za-z0-9_.+-]+$"  # a partition, account, QoS or reservation name
SBATCH_OWN = ("--parsable", "--output", "--error", "--chdir", "--job-name", "--wrap", "--wait", "--array", "--nodelist",
              "-o", "-e", "-D", "-J", "-W", "-a", "-w")  # set by reprokit for each job: not in slurm_extra_args


@dataclass(frozen=True)
class SlurmSettings:
    """What each step's ``sbatch`` asks for on a Slurm host (the ``slurm_*`` variables); ``node`` pins one node."""

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    reservation: str | None = None
    constraint: str | None = None
    gres: str | None = None
    gpus_per_node: int | None = None
    time_limit: str | None = None  # sbatch --time; default: each step's timeout, rounded up to minutes
    max_queue_wait_s: float = SLURM_QUEUE_WAIT_S  # a job pending longer is cancelled and the step says why
    requeue: bool = False  # let Slurm requeue a job (node failure, preemption); default --no-requeue
    extra_args: tuple[str, ...] = ()
    node: str | None = None  # set by a --nodes fan-out, never by the inventory


class HostVars(pydantic.BaseModel):
    """The variables reprokit reads from a host's merged variables; any other variable is Ansible's business."""

    model_config = pydantic.ConfigDict(extra="ignore", frozen=True)

    ansible_host: str | None = None
    ansible_port: int = pydantic.Field(22, ge=1, le=65535)
    ansible_user: str | None = None
    ansible_connection: str = "ssh"  # reprokit drives ssh (smart, paramiko) and local hosts; others stay Ansible's
    ansible_ssh_private_key_file: str | None = None
    ansible_python_interpreter: str | None = None
    ansible_become: bool | None = None
    # reprokit's own host facts
    gpu_arch: str | None = None
    gpu_count: int | None = pydantic.Field(None, ge=0)
    # the GPUs this inventory host's workloads may use (CUDA_VISIBLE_DEVICES: indices or GPU UUIDs, comma-separated):
    # several inventory hosts on one machine, each pinned to its own GPU, fan out as separate hosts
    cuda_visible_devices: str | None = pydantic.Field(None, pattern=r"^(\d+|GPU-[0-9a-fA-F-]+)(,(\d+|GPU-[0-9a-fA-F-]+))*$")
    runtime: str = "docker"  # a key of hosts/runtimes' RUNTIMES (pyxis: srun --container-image, Slurm only)
    proxy_jump: str | None = None
    workdir: str = "/var/lib/reprokit"
    # where the host keeps model weights (mounted read-only into containers) and caches kept across runs;
    # the defaults are the directories the Ansible `reprokit` role creates
    models_dir: str = pydantic.Field("/models", pattern=r"^/")
    cache_dir: str | None = pydantic.Field(None, pattern=r"^/")  # default: <workdir>/cache
    connect_timeout_s: float = pydantic.Field(10.0, gt=0)
    # docker runtime: what `docker run` asks for (NCCL and pinned host memory want memlock unlimited)
    container_ulimits: dict[str, int] = {"memlock": -1, "stack": 67108864}
    container_shm_size: str = pydantic.Field("16g", pattern=r"^[0-9]+[bkmg]?$")
    # how steps are launched: a detached SSH session, or a batch job through the Slurm login node this host names
    launcher: str = "session"  # a key of hosts/launchers' LAUNCHERS
    slurm_partition: str | None = pydantic.Field(None, pattern=SLURM_NAME)
    slurm_account: str | None = pydantic.Field(None, pattern=SLURM_NAME)
    slurm_qos: str | None = pydantic.Field(None, pattern=SLURM_NAME)
    slurm_reservation: str | None = pydantic.Field(None, pattern=SLURM_NAME)
    slurm_constraint: str | None = pydantic.Field(None, pattern=r"^[A-Za-z0-9_.&|\[\]*:()!,-]+$")
    slurm_gres: str | None = pydantic.Field(None, pattern=r"^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*)*$")
    slurm_gpus_per_node: int | None = pydantic.Field(None, ge=1)
    slurm_time_limit: str | None = pydantic.Field(None, pattern=r"^([0-9]+-)?[0-9]+(:[0-9]{2}){0,2}$")
    slurm_max_queue_wait_s: float = pydantic.Field(SLURM_QUEUE_WAIT_S, gt=0)
    slurm_requeue: bool = False
    slurm_extra_args: list[str] = []

    @pydantic.field_validator("slurm_extra_args")
    @classmethod
    def _extra_args(cls, value: list[str]) -> list[str]:
        for arg in value:
            if not arg.startswith("-") or any(c.isspace() for c in arg):
                raise ValueError(f"{arg!r} is not one sbatch option: write each as one item, e.g. --mem=64G")
            if arg.split("=", 1)[0] in SBATCH_OWN:
                raise ValueError(f"{arg.split('=', 1)[0]} is set by reprokit for each job; remove it from slurm_extra_args")
        return value

    @pydantic.field_validator("runtime", "launcher")
    @classmethod
    def _axis_known(cls, value: str, info: pydantic.ValidationInfo) -> str:
        axes = info.context
        known = getattr(axes, f"{info.field_name}s", None) if axes else None
        if known is not None and value not in known:
            raise ValueError(f"unknown {info.field_name} {value!r}; use one of {', '.join(known)}")
        return value

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
    connection: str  # "ssh" or "local" for the hosts reprokit can drive; any other is Ansible's only (e.g. winrm)
    address: str | None
    port: int
    user: str | None
    runtime: str  # a key of hosts/runtimes' RUNTIMES
    gpu_arch: str | None
    gpu_count: int | None
    groups: tuple[str, ...]
    python: str
    workdir: str
    key_file: str | None = None
    proxy_jump: str | None = None
    connect_timeout_s: float = 10.0
    container_ulimits: tuple[tuple[str, int], ...] = (("memlock", -1), ("stack", 67108864))
    container_shm_size: str = "16g"
    source: str = "built-in"  # file:line where the host is defined
    known_hosts_files: tuple[str, ...] = ()  # the SSH config's UserKnownHostsFile, read besides reprokit's own file
    models_dir: str = "/models"
    cache_dir: str | None = None
    launcher: str = "session"  # a key of hosts/launchers' LAUNCHERS
    slurm: SlurmSettings | None = None  # the sbatch options when the launcher runs batch jobs
    cuda_visible_devices: str | None = None  # exported to every workload on the host (its GPUs, as CUDA numbers them)
    in_container: bool = False  # the workload runs in an image (its runtime's), its step directory mounted at /out
    local: bool = False  # its access is this machine (``is_local``)

    @property
    def host_cache_dir(self) -> str:
        """The caches' directory on the host (``cache_dir``, or ``<workdir>/cache`` as the Ansible role makes it)."""
        return (self.cache_dir or f"{self.workdir.rstrip('/')}/cache").rstrip("/")

    @property
    def is_local(self) -> bool:
        """Reached on this machine (an access whose connection is this machine's: ``HostAxes.here``)."""
        return self.local

    def describe(self) -> dict[str, Any]:
        """What the run manifest records of the host (no secrets: key paths only)."""
        return {
            "name": self.name,
            "connection": self.connection,
            "address": self.address,
            "port": None if self.local else self.port,
            "user": self.user,
            "runtime": self.runtime,
            "gpu_arch": self.gpu_arch,
            "gpu_count": self.gpu_count,
            **({"cuda_visible_devices": self.cuda_visible_devices} if self.cuda_visible_devices else {}),
            "groups": list(self.groups),
            "source": self.source,
            **({"launcher": self.launcher, "slurm": {k: v for k, v in vars(self.slurm).items() if v not in (None, (), False)}}
               if self.slurm else {}),
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
        groups=(),
        python=sys.executable,
        workdir="runs",
        local=True,
    )


# Ansible's older spellings of the connection variables reprokit reads.
VARIABLE_ALIASES = {"ansible_ssh_host": "ansible_host", "ansible_ssh_port": "ansible_port", "ansible_ssh_user": "ansible_user",
                    "ansible_private_key_file": "ansible_ssh_private_key_file"}


@dataclass
class Inventory:
    path: Path | None
    hosts: dict[str, Host] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. a misspelt reprokit variable, with the closest known one

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

    def gateways(self, host: Host) -> tuple[Host, ...]:
        """The jump hosts in front of ``host``, its own ``proxy_jump`` first, each with its own settings.

        The one walker of a gateway chain (SSH connections, bulk copies, Ansible's ProxyCommand, the --dry plan):
        a loop is bad input, named with the chain that closes it.
        """
        chain: list[Host] = []
        names = [host.name]
        current = host
        while current.proxy_jump:
            gateway = self.host(current.proxy_jump)
            if gateway.name in names:
                raise ConfigError(f"{gateway.source}: proxy_jump loop through {' -> '.join([*names, gateway.name])};"
                                  " fix proxy_jump")
            chain.append(gateway)
            names.append(gateway.name)
            current = gateway
        return tuple(chain)

    def group(self, name: str) -> list[Host]:
        if name not in self.groups:
            known = ", ".join(sorted(self.groups)) or "(none)"
            raise ConfigError(f"{self.path or 'inventory'}: unknown group '{name}'; known groups: {known}")
        return [self.hosts[h] for h in self.groups[name]]


def misspelt_variables(host: str, variables: dict[str, Any], where) -> list[tuple[str, str, str, str]]:
    """(where, variable, closest reprokit name, host) for each variable close to one of reprokit's names (``gpu_cont``)."""
    known = [name for name in HostVars.model_fields if not name.startswith("ansible_")]
    found = []
    for key in variables:
        if key in known or key.startswith("ansible_"):  # ansible_*: Ansible's own namespace, hundreds of names
            continue
        hint = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
        if hint:
            found.append((where(key), key, hint[0], host))
    return found


def misspelling_warnings(found: list[tuple[str, str, str, str]]) -> list[str]:
    """One warning per place a misspelt variable is set, however many hosts inherit it (a group's vars)."""
    hosts_of: dict[tuple[str, str, str], list[str]] = {}
    for place, key, hint, host in found:
        hosts_of.setdefault((place, key, hint), []).append(host)
    warnings = []
    for (place, key, hint), hosts in hosts_of.items():
        others = f" (and {len(hosts) - 1} other host{'s' if len(hosts) > 2 else ''})" if len(hosts) > 1 else ""
        warnings.append(f"{place}: host '{hosts[0]}'{others}: variable '{key}' is not reprokit's (did you mean '{hint}'?);"
                        " it is passed to Ansible as it is")
    return warnings


@dataclass(frozen=True)
class HostAxes:
    """The names each axis of a host takes, from the registries of ``hosts/`` (``hosts/axes.py``): this layer
    validates against them and never lists them itself."""

    accesses: tuple[str, ...]
    launchers: tuple[str, ...]
    runtimes: tuple[str, ...]
    batch_launchers: tuple[str, ...]  # launchers whose steps are scheduler jobs (they take the slurm_* settings)
    container_runtimes: tuple[str, ...]  # runtimes whose workload runs in an image
    here: tuple[str, ...]  # accesses that reach this machine


def make_host(name: str, variables: dict[str, Any], groups: tuple[str, ...], source: str, where,
              axes: HostAxes) -> Host:
    """A ``Host`` from one host's merged variables; ``where(key)`` says where a variable is set (for errors)."""
    merged = dict(variables)
    for old, new in VARIABLE_ALIASES.items():
        if old in merged:
            merged.setdefault(new, merged.pop(old))
    try:
        hv = HostVars.model_validate(merged, context=axes)
    except pydantic.ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        msg = err["msg"].removeprefix("Value error, ")
        shown = "" if err["msg"].startswith("Value error, ") else f" (got {err.get('input')!r:.60})"
        raise ConfigError(f"{where(key)}: host '{name}': field '{key}': {msg}{shown}") from None
    connection = {"smart": "ssh", "paramiko": "ssh"}.get(hv.ansible_connection, hv.ansible_connection)
    local = connection in axes.here
    address = hv.ansible_host if local or hv.ansible_host else name  # Ansible falls back to the name
    return Host(
        name=name,
        connection=connection,
        address=address,
        port=hv.ansible_port,
        user=hv.ansible_user,
        runtime=hv.runtime,
        gpu_arch=hv.gpu_arch,
        gpu_count=hv.gpu_count,
        groups=groups,
        python=hv.ansible_python_interpreter or "python3",
        workdir=hv.workdir,
        key_file=hv.ansible_ssh_private_key_file,
        proxy_jump=hv.proxy_jump,
        connect_timeout_s=hv.connect_timeout_s,
        container_ulimits=tuple(hv.container_ulimits.items()),
        container_shm_size=hv.container_shm_size,
        source=source,
        models_dir=hv.models_dir,
        cache_dir=hv.cache_dir,
        launcher=hv.launcher,
        slurm=slurm_settings(hv, axes),
        cuda_visible_devices=hv.cuda_visible_devices,
        in_container=hv.runtime in axes.container_runtimes,
        local=local,
    )


def slurm_settings(hv: HostVars, axes: HostAxes) -> SlurmSettings | None:
    if hv.launcher not in axes.batch_launchers:
        return None
    return SlurmSettings(hv.slurm_partition, hv.slurm_account, hv.slurm_qos, hv.slurm_reservation, hv.slurm_constraint,
                         hv.slurm_gres, hv.slurm_gpus_per_node, hv.slurm_time_limit, hv.slurm_max_queue_wait_s,
                         hv.slurm_requeue, tuple(hv.slurm_extra_args))


def read_inventory(path: Path | str | None, axes: HostAxes) -> Inventory:
    """Load an inventory (file or directory), each host's axes checked against ``axes``; a missing path gives an
    inventory with only ``local``. The front ends call ``hosts.axes.load_inventory``, which passes the registries'."""
    if path is None or not Path(path).exists():
        inventory = Inventory(path=Path(path) if path else None)
        inventory.hosts[LOCAL_HOST] = local_host()
        return inventory
    path = Path(path)
    if not ansible_inventory.available():  # ansible-core is a dependency: only a broken install gets here
        raise ConfigError(f"{path}: ansible-inventory is not installed; reinstall reprokit (it depends on ansible-core)")
    return _load_with_ansible(path, axes)


def _load_with_ansible(path: Path, axes: HostAxes) -> Inventory:
    # A YAML file is parsed here first: its syntax errors get reprokit's exact file:line, and its lines the errors below.
    doc = load_yaml(path) if path.is_file() and path.suffix.lower() in (".yml", ".yaml") else None
    if doc is not None:
        _check_host_names(doc)
    read = ansible_inventory.read(path)
    inventory = Inventory(path=path)
    inventory.hosts[LOCAL_HOST] = local_host()
    misspelt: list[tuple[str, str, str, str]] = []
    for name, variables in read.hostvars.items():
        groups = tuple(read.host_groups.get(name, ()))

        def where(key: str, name: str = name, groups: tuple[str, ...] = groups) -> str:
            return ansible_inventory.find_line(path, name, key, list(groups), doc)

        source = _host_line(doc, name) if doc else ansible_inventory.find_line(path, name, "", [], None)
        if name == LOCAL_HOST:
            raise ConfigError(f"{source}: host name '{LOCAL_HOST}' is reserved for this machine; rename it")
        check_name("host", name, source)  # it names run directories and containers
        misspelt += misspelt_variables(name, variables, where)
        inventory.hosts[name] = make_host(name, variables, groups, source, where, axes)
    inventory.warnings = misspelling_warnings(misspelt)
    for group, members in read.groups.items():
        if group in inventory.hosts:
            raise ConfigError(f"{path}: '{group}' is both a group and a host name; rename one")
        inventory.groups[group] = ([LOCAL_HOST] if group == "all" else []) + members
    return inventory


def _check_host_names(doc: LoadedYaml) -> None:
    """Every host a YAML inventory names (under any ``hosts:``), checked where it is written, before Ansible reads
    it: a name Ansible cannot take apart (an ESC in it) fails there with an internal unpack error and no line."""
    for loc in sorted(doc.lines, key=lambda loc: doc.lines[loc]):
        if len(loc) >= 2 and loc[-2] == "hosts" and isinstance(loc[-1], str):
            check_name("host", loc[-1], doc.where(loc))


def _host_line(doc: LoadedYaml, name: str) -> str:
    """``file:line`` of the first place a YAML inventory gives ``name`` variables (else lists it)."""
    listed = None
    for loc in sorted(doc.lines, key=lambda loc: doc.lines[loc]):
        if len(loc) >= 2 and loc[-2] == "hosts" and loc[-1] == name:
            node: Any = doc.data
            for part in loc:
                node = node[part] if isinstance(node, dict) else None
            if node:
                return doc.where(loc)
            listed = listed or doc.where(loc)
    return listed or str(doc.path)
