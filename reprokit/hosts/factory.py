"""Pick the executor for a host, each axis by name from the inventory: the access (local, or SSH to the host or a
Slurm login node), the launcher (``launcher``: a detached session, a Slurm job; ``launch.LAUNCHERS``) and the runtime
(``runtime``: ``runtimes.runtime_for``), its layers built from one configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.errors import ConfigError
from reprokit.hosts import detached, slurm  # noqa: F401 - each registers its launcher in LAUNCHERS
from reprokit.hosts.executor import Executor, LocalNativeExecutor
from reprokit.hosts.launch import LAUNCHERS
from reprokit.hosts.pullback import MAX_PULL_BYTES, MAX_PULL_FILES, PullBack
from reprokit.hosts.remote import RemoteExecutor
from reprokit.hosts.runtimes import runtime_for
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS, SSHSettings
from reprokit.hosts.ssh_config import resolve as resolve_ssh_config
from reprokit.hosts.transport import IO_TIMEOUT_S, RECONNECT_ATTEMPTS, Transport
from reprokit.say import Say, silent


@dataclass
class ConnectOptions:
    known_hosts: Path = DEFAULT_KNOWN_HOSTS
    accept_new_host_key: bool = False
    images: dict[str, str] = field(default_factory=dict)
    keep_remote: bool = False
    reconnect_attempts: int = RECONNECT_ATTEMPTS
    io_timeout_s: float = IO_TIMEOUT_S
    progress: Callable[[str, int], Any] | None = None  # a transfer progress bar factory (the CLI gives rich's)
    ssh_config: str | None = None  # OpenSSH client config to honour; None: ~/.ssh/config if it exists; "none": no file
    max_pull_bytes: int = MAX_PULL_BYTES  # what one run may bring back from its host in all (--max-pull-bytes)
    max_pull_files: int = MAX_PULL_FILES  # how many entries one run may list and bring back (reprokit.max_pull_files)


ACCESS: dict[str, Callable[..., Executor]] = {}  # a host's connection -> how the executor reaches it


def executor_for(host: Host, inventory: Inventory, runs_dir: Path, options: ConnectOptions,
                 say: Say = silent) -> Executor:
    access = ACCESS.get(host.connection)
    if access is None:
        raise ConfigError(f"{host.source}: host '{host.name}': connection {host.connection!r} is Ansible's only;"
                          f" reprokit drives {', '.join(sorted(ACCESS))}")
    return access(host, inventory, runs_dir, options, say)


def transport_for(host: Host, inventory: Inventory, options: ConnectOptions, say: Say = silent) -> Transport:
    """The connection to ``host``: the SSH config applied once, into the settings both SSH clients are built from."""
    host, inventory = resolve_ssh_config(host, inventory, options.ssh_config)
    return Transport(host, SSHSettings.for_host(host, inventory, options.known_hosts), options.accept_new_host_key, say,
                     reconnect_attempts=options.reconnect_attempts, io_timeout_s=options.io_timeout_s)


def remote_executor(host: Host, inventory: Inventory, options: ConnectOptions, say: Say = silent) -> RemoteExecutor:
    transport = transport_for(host, inventory, options, say)
    pullback = PullBack(transport, max_pull_bytes=options.max_pull_bytes, max_pull_files=options.max_pull_files)
    if options.progress is not None:
        pullback.progress = options.progress
    if transport.host.launcher not in LAUNCHERS:
        raise ConfigError(f"{host.source}: host '{host.name}': unknown launcher {host.launcher!r}; use one of"
                          f" {', '.join(sorted(LAUNCHERS))}")
    launcher = LAUNCHERS[transport.host.launcher](transport, pullback)
    return RemoteExecutor(transport, runtime_for(transport.host, options.images), pullback, launcher)


def node_hosts(host: Host, inventory: Inventory, options: ConnectOptions, count: int, say: Say = silent) -> list[Host]:
    """``--nodes N`` on a Slurm host: one host per node Slurm can use now, each run's jobs pinned to its node.

    Each gets its own name (``cluster-c1``), so its record, its lock and the fan-out table are per node.
    """
    if host.launcher != "slurm" or host.slurm is None:
        raise ConfigError(f"{host.source}: --nodes needs a Slurm host (launcher: slurm); '{host.name}' launches"
                          f" {host.launcher} steps: use --group for several SSH hosts")
    transport = transport_for(host, inventory, options, say)
    transport.connect()
    try:
        nodes = slurm.SlurmLauncher(transport, PullBack(transport)).usable_nodes()
    finally:
        transport.close()
    if len(nodes) < count:
        raise ConfigError(f"--nodes {count}: host '{host.name}' has {len(nodes)} usable node(s) now"
                          f" ({', '.join(nodes) or 'none'}); ask for at most {len(nodes)}")
    return [replace(host, name=f"{host.name}-{node}", slurm=replace(host.slurm, node=node)) for node in nodes[:count]]


def fanned_out(inventory: Inventory, described: dict[str, Any]) -> Host:
    """The host a record names: an inventory host, or one node of a --nodes fan-out over a Slurm host."""
    name = str(described.get("name"))
    node = (described.get("slurm") or {}).get("node")
    if name not in inventory.hosts and node and name.endswith(f"-{node}"):
        base = inventory.host(name[: -len(node) - 1])
        if base.slurm is not None:
            return replace(base, name=name, slurm=replace(base.slurm, node=node))
    return inventory.host(name)


ACCESS["local"] = lambda host, inventory, runs_dir, options, say: LocalNativeExecutor(host, runs_dir)
ACCESS["ssh"] = lambda host, inventory, runs_dir, options, say: remote_executor(host, inventory, options, say)
