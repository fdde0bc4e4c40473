"""The access protocol: what every launcher and executor asks of the way a host is reached.

A ``Connection`` runs short shell commands on the host (``sh``), puts files there (``write_*``), reads small files
and a growing log back (``read_text``, ``read_chunk``) and pulls a step's directory home (``pull_back``: a
``Puller``). Locally that is a subprocess and this machine's files; over SSH, a Paramiko channel, SFTP and the
confined pull-back. Everything above (the launchers, the executor, the lock) is written once against this
protocol, as Invoke's ``Runner`` is written once and ``Local``/``Remote`` override its primitives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from reprokit.config.inventory import Host
from reprokit.hosts.pull_listing import Listing
from reprokit.output.say import Say
from reprokit.output.secrets import Redactor


@dataclass(frozen=True)
class CommandResult:
    """How a streamed command ended: its exit code and its output (stdout and stderr together, as printed)."""

    returncode: int
    output: str

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


class Puller(Protocol):
    """Brings a step's directory from the host into the record, trusting nothing the host lists."""

    redactor: Redactor
    check_stop: Callable[[], None]  # raises KeyboardInterrupt when the run is told to stop
    progress: Callable[[str, int], Any]

    def pull(self, remote_dir: str, out_dir: Path, on_bytes: Callable[[int], None] | None = None) -> Listing:
        """Bring every regular file of ``remote_dir`` into ``out_dir``; what cannot come is listed, never dropped."""


class Connection(Protocol):
    """One way to reach ``host``: run, put, read, pull."""

    host: Host
    say: Say
    io_timeout_s: float
    reconnect_attempts: int

    @property
    def is_open(self) -> bool: ...

    def connect(self, retries: int | None = None) -> None: ...

    def reconnect(self) -> None:
        """Reopen after a drop (nothing to do on this machine)."""

    def close(self) -> None: ...

    def sh(self, command: str, timeout_s: float | None = None, check: bool = True,
           retry: bool = True) -> tuple[int, str, str]:
        """Run a short shell command on the host: exit code, stdout, stderr; ``check``: a failure raises."""

    def stream(self, argv: Sequence[str], *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
               timeout_s: float | None = None, on_line: Callable[[str], None] | None = None) -> CommandResult:
        """Run ``argv`` to its end with ``env`` added and ``stdin`` fed as bytes (a build's context), each output
        line handed to ``on_line`` as it comes; never run twice (a dropped link is an error); past ``timeout_s``
        a ``HostError``. Image builds run through it."""

    def write_bytes(self, path: str, data: bytes) -> None: ...

    def write_text(self, path: str, text: str) -> None: ...

    def write_private(self, path: str, text: str) -> None:
        """Create a file readable by its owner alone, mode 0600 before any byte is written."""

    def read_text(self, path: str) -> str | None:
        """A small file's text (bounded), or None when it is missing or unreadable."""

    def read_chunk(self, path: str, offset: int, max_bytes: int) -> bytes | None:
        """At most ``max_bytes`` of ``path`` from ``offset`` (b"" when nothing is new), None when it is missing."""

    def path_exists(self, path: str) -> bool: ...

    def mkdir_exclusive(self, path: str) -> bool: ...

    def remove_tree(self, path: str) -> None: ...

    def age_s(self, path: str) -> float | None:
        """Seconds since ``path`` last changed, by the host's own clock."""

    def explain(self, what: str, detail: str) -> str: ...

    def disk_problem(self, problem: str) -> str: ...

    def put_file(self, source: Path, path: str) -> None:
        """Copy a file of this machine to ``path`` on the host."""

    def is_this_machine(self) -> bool:
        """Whether the host's files are this machine's (then the control cache is used where it is)."""

    def dropped(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a link that broke under a command (then ``reconnect`` and go on)."""

    def python_path(self) -> tuple[str, ...]:
        """Entries a native workload keeps on its PYTHONPATH after the shipped code (the caller's, on this machine)."""

    def pull_back(self, max_pull_bytes: int, max_pull_files: int) -> Puller:
        """The puller of this connection, bounded per run."""


__all__ = ["CommandResult", "Connection", "Puller"]
