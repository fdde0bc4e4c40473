"""The operator's OpenSSH client config, applied to an inventory host before reprokit connects.

An inventory host's address may be an alias of ``~/.ssh/config`` (or of the file ``--ssh-config`` / the config key
``reprokit.ssh_config`` names): its ``HostName``, ``User``, ``Port``, ``IdentityFile``, ``ProxyJump`` chain and
``UserKnownHostsFile`` are resolved here, once, into the host record that both the Paramiko connection and the
OpenSSH bulk copy read, so the two paths cannot disagree. The inventory wins where it sets a value itself (Ansible's
own order: its variables override the SSH config). ``StrictHostKeyChecking`` is not read: host keys are always
verified (``--accept-new-host-key`` is the only relaxation).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from paramiko.config import SSHConfig

from reprokit.config.inventory import Host, Inventory
from reprokit.errors import ConfigError

DEFAULT_SSH_CONFIG = Path("~/.ssh/config")
_JUMP = re.compile(r"^(?:(?P<user>[^@]+)@)?(?P<host>\[[^\]]+\]|[^:]+)(?::(?P<port>\d+))?$")
MAX_JUMPS = 8


def load_ssh_config(spec: str | None) -> tuple[SSHConfig, Path | None]:
    """``spec``: a file, ``"none"`` (no file), or None (``~/.ssh/config`` when it exists)."""
    if spec == "none":
        return SSHConfig(), None
    path = Path(spec).expanduser() if spec else DEFAULT_SSH_CONFIG.expanduser()
    if not path.is_file():
        if spec:
            raise ConfigError(f"{path}: SSH config file not found (--ssh-config / reprokit.ssh_config)")
        return SSHConfig(), None
    try:
        return SSHConfig.from_path(str(path)), path
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the SSH config: {exc}") from None


def resolve(host: Host, inventory: Inventory, spec: str | None) -> tuple[Host, Inventory]:
    """``host`` with its SSH config applied, and an inventory that also holds the config's jump hosts."""
    config, path = load_ssh_config(spec)
    if path is None or host.is_local:
        return host, inventory
    hosts = dict(inventory.hosts)
    resolved = _apply(host, config, path, hosts, depth=0)
    return resolved, dataclasses.replace(inventory, hosts=hosts)


def _apply(host: Host, config: SSHConfig, path: Path, hosts: dict[str, Host], depth: int) -> Host:
    if depth > MAX_JUMPS:
        raise ConfigError(f"{path}: ProxyJump chain of '{host.name}' is longer than {MAX_JUMPS} hops; is it a loop?")
    entry = config.lookup(str(host.address))
    if entry.get("proxycommand", "none").lower() != "none" and host.proxy_jump is None:
        raise ConfigError(f"{path}: 'ProxyCommand' of '{host.address}' is not supported (host keys could not be checked"
                          " through it); write the gateway as 'ProxyJump' there, or as proxy_jump in the inventory")
    changes: dict = {"address": entry.get("hostname", host.address)}
    if host.user is None and entry.get("user"):
        changes["user"] = entry["user"]
    if host.port == 22 and entry.get("port"):
        changes["port"] = int(entry["port"])
    if host.key_file is None and entry.get("identityfile"):
        changes["key_file"] = entry["identityfile"][0]
    if entry.get("userknownhostsfile"):
        changes["known_hosts_files"] = tuple(str(Path(p).expanduser()) for p in entry["userknownhostsfile"].split())
    if host.proxy_jump is None and entry.get("proxyjump", "none").lower() != "none":
        changes["proxy_jump"] = _jump_chain(entry["proxyjump"], host, config, path, hosts, depth)
    return dataclasses.replace(host, **changes)


def _jump_chain(spec: str, host: Host, config: SSHConfig, path: Path, hosts: dict[str, Host], depth: int) -> str:
    """Add ``ProxyJump a,b`` to ``hosts`` as jump hosts (a first, then b through a); the name of the last hop."""
    previous = None
    for hop in spec.split(","):
        match = _JUMP.match(hop.strip())
        if not match:
            raise ConfigError(f"{path}: ProxyJump '{hop}' of '{host.address}': write [user@]host[:port]")
        name = f"{hop.strip()} (ssh config)"
        jump = Host(name=name, connection="ssh", address=match["host"].strip("[]"), port=int(match["port"] or 22),
                    user=match["user"], runtime="native", gpu_arch=None, gpu_count=None, groups=(),
                    python="python3", workdir=host.workdir, connect_timeout_s=host.connect_timeout_s,
                    source=f"{path} (ProxyJump of {host.address})", proxy_jump=previous)
        if previous is None:
            jump = _apply(jump, config, path, hosts, depth + 1)  # the first hop may have its own config (and jumps)
        else:
            jump = dataclasses.replace(_apply(dataclasses.replace(jump, proxy_jump=None), config, path, hosts, depth + 1),
                                       proxy_jump=previous)
        hosts[name] = jump
        previous = name
    return previous or ""
