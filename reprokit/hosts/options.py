"""What the front end decides about reaching hosts, for every access, launcher and runtime alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.hosts.pullback import MAX_PULL_BYTES, MAX_PULL_FILES
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS
from reprokit.hosts.transport import IO_TIMEOUT_S, RECONNECT_ATTEMPTS


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


__all__ = ["ConnectOptions"]
