"""Pick the executor for a host: local native, or SSH (native or docker), its layers built from one configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.hosts.executor import Executor, LocalNativeExecutor
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


def executor_for(host: Host, inventory: Inventory, runs_dir: Path, options: ConnectOptions,
                 say: Say = silent) -> Executor:
    if host.is_local:
        return LocalNativeExecutor(host, runs_dir)
    return remote_executor(host, inventory, options, say)


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
    return RemoteExecutor(transport, runtime_for(transport.host, options.images), pullback)
