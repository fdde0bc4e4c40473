"""Pick the executor for a host, each axis by name from the inventory, each name a key of its registry: the access
(``ansible_connection``: ``access.ACCESS``), the launcher (``launcher``: ``launchers.LAUNCHERS``) and the runtime
(``runtime``: ``runtimes.RUNTIMES``), all built from one ``ConnectOptions``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory, local_host
from reprokit.errors import ConfigError
from reprokit.hosts.access import ACCESS, Connection
from reprokit.hosts.executor import Executor
from reprokit.hosts.host_executor import HostExecutor
from reprokit.hosts.launch import Launcher
from reprokit.hosts.launchers import LAUNCHERS
from reprokit.hosts.options import ConnectOptions
from reprokit.hosts.runtimes import runtime_for
from reprokit.output.say import Say, silent


def connection_for(host: Host, inventory: Inventory, options: ConnectOptions, say: Say = silent,
                   runs_dir: Path = Path("runs")) -> Connection:
    """The connection to ``host`` (not opened yet), by its access."""
    access = ACCESS.get(host.connection)
    if access is None:
        raise ConfigError(f"{host.source}: host '{host.name}': connection {host.connection!r} is Ansible's only;"
                          f" reprokit drives {', '.join(sorted(ACCESS))}")
    return access.open_for(host, inventory, options, say, runs_dir)


def this_machine(say: Say = silent) -> Connection:
    """The connection to this machine, by the inventory's own name for it (a build here, a Docker engine named by
    ``DOCKER_HOST`` reached from here)."""
    host = local_host()
    return connection_for(host, Inventory(path=None, hosts={host.name: host}), ConnectOptions(), say)


def launcher_on(connection: Connection, options: ConnectOptions) -> Launcher:
    """The host's launcher on ``connection``, with the connection's puller bounded as ``options`` say."""
    puller = connection.pull_back(options.max_pull_bytes, options.max_pull_files)
    if options.progress is not None:
        puller.progress = options.progress
    return LAUNCHERS[connection.host.launcher](connection, puller)


def executor_for(host: Host, inventory: Inventory, runs_dir: Path, options: ConnectOptions,
                 say: Say = silent) -> HostExecutor:
    """The one executor, for any host: its access, its launcher, its runtime."""
    connection = connection_for(host, inventory, options, say, runs_dir)
    launcher = launcher_on(connection, options)
    return HostExecutor(connection, runtime_for(connection.host, options.images), launcher.pullback, launcher)


def node_hosts(host: Host, inventory: Inventory, options: ConnectOptions, count: int, say: Say = silent) -> list[Host]:
    """``--nodes N`` on a host whose launcher has nodes (a scheduler): one host per node usable now, each run's jobs
    pinned to its node.

    Each gets its own name (``cluster-c1``), so its record, its lock and the fan-out table are per node.
    """
    connection = connection_for(host, inventory, options, say)
    launcher = launcher_on(connection, options)
    if not launcher.in_batch_job or host.slurm is None:
        raise ConfigError(f"{host.source}: --nodes needs a host whose launcher has nodes (launcher: slurm); '{host.name}'"
                          f" launches {host.launcher} steps: use --group for several hosts")
    connection.connect()
    try:
        nodes = launcher.usable_nodes() or []
    finally:
        connection.close()
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


__all__ = ["ConnectOptions", "Executor", "connection_for", "executor_for", "fanned_out", "launcher_on", "node_hosts",
           "this_machine"]
