"""Pick the executor for a host: local native, or remote over SSH (native or docker)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reprokit.config.inventory import Host, Inventory
from reprokit.hosts.executor import LocalNativeExecutor
from reprokit.hosts.remote import RemoteExecutor
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS


@dataclass
class ConnectOptions:
    known_hosts: Path = DEFAULT_KNOWN_HOSTS
    accept_new_host_key: bool = False
    images: dict[str, str] = field(default_factory=dict)
    keep_remote: bool = False


def executor_for(host: Host, inventory: Inventory, runs_dir: Path, options: ConnectOptions,
                 say: Callable[[str], None] = print) -> LocalNativeExecutor | RemoteExecutor:
    if host.is_local:
        return LocalNativeExecutor(host, runs_dir)
    return RemoteExecutor(host, inventory, options.known_hosts, options.accept_new_host_key, dict(options.images), say)
