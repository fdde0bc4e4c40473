"""One SSH connection to a host: open, reconnect, short commands, file operations.

The connection goes through the host's gateway chain with every host key verified (``ssh.py``); both it and
the OpenSSH client of the bulk copies come from the transport's one ``SSHSettings``. Commands here are short
and idempotent (steps run detached, ``detached.py``), so a dropped connection is survived by reconnecting,
with backoff, and running the command once more. Every value reaching the host's shell is quoted by
``shell.py``. The file operations are the ``LockFS`` of a host lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import paramiko
from fabric import Connection
from invoke.exceptions import CommandTimedOut

from reprokit.config.inventory import Host
from reprokit.errors import HostError, ReprokitError
from reprokit.hosts import shell
from reprokit.hosts.explain import explain_failure
from reprokit.hosts.retry import Retry
from reprokit.hosts.ssh import SSHSettings, fabric_connection, open_connection, openssh_argv
from reprokit.output.say import Say, silent

RECONNECT_ATTEMPTS = 5
IO_TIMEOUT_S = 30.0
SMALL_FILE_MAX_BYTES = 1 << 20  # exit_code, pid, a lock's owner.json: read at most this much
LINK_ERRORS = (OSError, EOFError, paramiko.SSHException)  # what a dropped or dead connection raises


class ConnectionLost(HostError):
    """The host stayed unreachable through every reconnect attempt."""


class CommandUnanswered(TimeoutError):
    """A command that got no answer within its timeout: it may have run, so it is never run again by ``sh``."""


def link_dropped(exc: BaseException) -> bool:
    """Whether ``sh`` reconnects and runs its command again: a broken link, not a command left unanswered."""
    return isinstance(exc, LINK_ERRORS) and not isinstance(exc, CommandUnanswered)


def reconnect_policy(attempts: int = RECONNECT_ATTEMPTS) -> Retry:
    """Reopening a dropped connection: 1 s doubling to 8 s between attempts, each attempt one try to connect.

    Every failure to connect is a ``HostError`` (``ssh.open_connection`` has classified it); a refused host key
    is one too, and is retried here as before: a host that was being reinstalled may come back with its key.
    """
    return Retry(attempts=attempts, transient=(HostError,), first_delay_s=1.0, max_delay_s=8.0)


@dataclass
class Transport:
    """The control connection to ``host``, built from ``settings`` (see ``ssh.SSHSettings``)."""

    host: Host
    settings: SSHSettings
    accept_new_host_key: bool = False
    say: Say = silent
    reconnect_attempts: int = RECONNECT_ATTEMPTS
    io_timeout_s: float = IO_TIMEOUT_S  # a silent dead link must not block a read for TCP's minutes
    conn: Connection | None = field(default=None, repr=False)
    _sftp: paramiko.SFTPClient | None = field(default=None, repr=False)

    # -- the connection -----------------------------------------------------------------------
    def connect(self, retries: int | None = None) -> None:
        conn = fabric_connection(self.settings, self.accept_new_host_key, self.say)
        self.conn = open_connection(conn, say=self.say) if retries is None else open_connection(conn, retries, self.say)
        self._sftp = None

    def reconnect(self) -> None:
        """Reopen after a drop, with backoff (1 s doubling to 8 s); transient failures only."""
        def reopen(_: int) -> None:
            self.close()
            self.connect(retries=1)

        try:
            reconnect_policy(self.reconnect_attempts).run(reopen)
        except HostError as exc:
            raise ConnectionLost(f"host '{self.host.name}': lost the connection and could not reconnect: {exc}") from None

    def close(self) -> None:
        for closer in (self._sftp, self.conn):
            try:
                if closer is not None:
                    closer.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        self._sftp = None

    def openssh_argv(self) -> list[str] | None:
        """The OpenSSH client for bulk copies, from the same settings as this connection (None: not installed)."""
        return openssh_argv(self.settings)

    def open_session(self, window_bytes: int, max_packet_bytes: int) -> paramiko.Channel:
        """A new channel on the open connection (a streamed command: the pull-back's reader, an image build)."""
        assert self.conn is not None
        return self.conn.client.get_transport().open_session(window_size=window_bytes, max_packet_size=max_packet_bytes)

    @property
    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            assert self.conn is not None
            self._sftp = self.conn.client.open_sftp()
            self._sftp.get_channel().settimeout(self.io_timeout_s)
        return self._sftp

    # -- short commands -----------------------------------------------------------------------
    def sh(self, command: str, timeout_s: float | None = None, check: bool = True, retry: bool = True) -> tuple[int, str, str]:
        """Run a short management command (bounded by the I/O timeout unless told otherwise); steps run detached.

        Commands here are idempotent, so one dropped connection is survived by reconnecting and running it again.
        """
        assert self.conn is not None

        def run_once(_: int) -> Any:
            assert self.conn is not None
            try:
                return self.conn.run(command, hide=True, warn=True, in_stream=False,
                                     timeout=timeout_s if timeout_s is not None else self.io_timeout_s)
            except CommandTimedOut:  # not retried: the command may have run (a step's launch must not run twice)
                raise CommandUnanswered(f"`{command.split()[0]}` got no answer within the I/O timeout") from None

        def reconnect(exc: BaseException, _: float) -> None:
            self.say(f"      connection to {self.host.name} dropped ({type(exc).__name__}); reconnecting")
            self.reconnect()

        result = Retry(attempts=2 if retry else 1, transient=link_dropped).run(run_once, reconnect)
        if check and result.exited != 0:
            raise HostError(self.explain(f"`{command.split()[0]}` failed", result.stderr or result.stdout))
        return result.exited, result.stdout, result.stderr

    def explain(self, what: str, detail: str) -> str:
        """One line for a failed command: what failed and the host's last word, or what to do on a full disk."""
        return explain_failure(self.host, what, detail)

    def disk_problem(self, problem: str) -> str:
        """``problem``, and what to do when the host's workdir is full (SFTP only says "Failure" then)."""
        workdir = self.host.workdir.rstrip("/")
        try:
            code, out, _ = self.sh(f"df -Pk -- {shell.quote(workdir)} | tail -1", check=False)
        except (ReprokitError, *LINK_ERRORS):
            return problem
        fields = out.split()
        if code == 0 and len(fields) >= 4 and fields[3] == "0":
            return f"{problem}; host '{self.host.name}' has no space left in {workdir}"
        return problem

    def path_exists(self, path: str) -> bool:
        code, _, _ = self.sh(f"test -e {shell.quote(path)}", check=False)
        return code == 0

    # -- files (SFTP), and the LockFS of a host lock -------------------------------------------
    def write_bytes(self, path: str, data: bytes) -> None:
        with self.sftp.open(path, "wb") as fh:
            fh.write(data)

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode())

    def write_private(self, path: str, text: str) -> None:
        """Create a file readable by the SSH user alone, mode 0600 before any byte is written."""
        with self.sftp.open(path, "wx") as fh:
            fh.chmod(0o600)
            fh.write(text.encode())

    def read_text(self, path: str) -> str | None:
        """The file's text, or None when it is missing or unreadable; a broken connection raises."""
        try:
            with self.sftp.open(path, "r") as fh:
                return fh.read(SMALL_FILE_MAX_BYTES).decode(errors="replace")  # the host decides its size: bound it
        except (FileNotFoundError, PermissionError):
            return None

    def mkdir_exclusive(self, path: str) -> bool:
        code, _, err = self.sh(f"mkdir {shell.quote(path)}", check=False, retry=False)
        if code != 0 and "File exists" not in err:
            raise HostError(self.explain(f"cannot create {path}", err))
        return code == 0

    def remove_tree(self, path: str) -> None:
        self.sh(f"rm -rf -- {shell.quote(path)}")

    def age_s(self, path: str) -> float | None:
        """Seconds since ``path`` last changed, by the host's own clock (never this machine's)."""
        code, out, _ = self.sh(f"echo $(( $(date +%s) - $(stat -c %Y -- {shell.quote(path)}) ))", check=False)
        return float(out.strip()) if code == 0 and out.strip().lstrip("-").isdigit() else None


__all__ = ["CommandUnanswered", "ConnectionLost", "IO_TIMEOUT_S", "LINK_ERRORS", "RECONNECT_ATTEMPTS", "Transport"]
