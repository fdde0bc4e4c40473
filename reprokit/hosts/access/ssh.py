"""A host over SSH: the ``Transport`` (one Paramiko connection through the gateway chain, reconnects, SFTP) as a
``Connection``, its pull-back the confined ``PullBack`` (``pullback.py``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from reprokit.config.inventory import Host, Inventory
from reprokit.hosts.access.base import CommandResult
from reprokit.hosts.access.ssh_command import stream_over_ssh
from reprokit.hosts.logstream import STREAM_READ_BYTES
from reprokit.hosts.options import ConnectOptions
from reprokit.hosts.pullback import PullBack
from reprokit.hosts.ssh import SSHSettings, is_dropped_link
from reprokit.hosts.ssh_config import resolve as resolve_ssh_config
from reprokit.hosts.transport import Transport
from reprokit.output.say import Say, silent


class SSHConnection(Transport):
    """The ``Connection`` to an SSH host (or a Slurm login node)."""

    reaches_this_machine: ClassVar[bool] = False

    @classmethod
    def open_for(cls, host: Host, inventory: Inventory, options: ConnectOptions, say: Say = silent,
                 runs_dir: Path = Path("runs")) -> SSHConnection:
        """The connection to ``host``: the SSH config applied once, into the settings both SSH clients are built from."""
        host, inventory = resolve_ssh_config(host, inventory, options.ssh_config)
        return cls(host, SSHSettings.for_host(host, inventory, options.known_hosts), options.accept_new_host_key, say,
                   reconnect_attempts=options.reconnect_attempts, io_timeout_s=options.io_timeout_s)

    @property
    def is_open(self) -> bool:
        return self.conn is not None

    def read_chunk(self, path: str, offset: int, max_bytes: int = STREAM_READ_BYTES) -> bytes | None:
        try:
            size = self.sftp.stat(path).st_size
        except FileNotFoundError:
            return None
        if size <= offset:
            return b""
        with self.sftp.open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(min(size - offset, max_bytes))

    def put_file(self, source: Path, path: str) -> None:
        self.sftp.put(str(source), path)

    def stream(self, argv: Sequence[str], *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
               timeout_s: float | None = None, on_line: Callable[[str], None] | None = None) -> CommandResult:
        return stream_over_ssh(self, argv, stdin=stdin, env=env, timeout_s=timeout_s, on_line=on_line)

    def python_path(self) -> tuple[str, ...]:
        return ()  # the host's environment is its own; the shipped code alone goes first

    def is_this_machine(self) -> bool:
        return False

    def dropped(self, exc: BaseException) -> bool:
        """A link that broke under a running command (not a refusal): worth reconnecting for."""
        return is_dropped_link(exc)

    def pull_back(self, max_pull_bytes: int, max_pull_files: int) -> PullBack:
        return PullBack(self, max_pull_bytes=max_pull_bytes, max_pull_files=max_pull_files)


__all__ = ["SSHConnection"]
