"""One step running detached on an SSH host: launch, stream its log, its exit code, stop it, collect its files.

The step runs under a wrapper (``setsid``, its own session, a remote ``timeout``), so a dropped connection
never kills it: the control plane reconnects, or leaves the run ``detached`` for ``invoke collect``. When the
step ends, whatever it left running in its session is killed. Its log streams back while it runs; its files
come back through ``pullback.py``, which trusts no path the host sends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reprokit.errors import HostError, ReprokitError
from reprokit.hosts import shell
from reprokit.hosts.pullback import Listing, PullBack, PullStopped
from reprokit.hosts.ssh import is_dropped_link
from reprokit.hosts.transport import LINK_ERRORS, ConnectionLost, Transport

POLL_MIN_S, POLL_MAX_S = 0.02, 0.5  # poll fast while a step is short or chatty, back off while it is quiet
KILL_AFTER_S = 10
REMOTE_GRACE_S = 30  # the remote `timeout` should end a step first; the control plane waits this much longer
EXIT_PLACEHOLDER = b"running\n"  # the wrapper overwrites these 8 bytes with the exit code
LIVENESS_EVERY_S = 5.0
STREAM_READ_BYTES = 4 << 20  # the step log is followed at most this much per read
STOP = threading.Event()  # set by a signal handler (e.g. of a --group fan-out): every executor ends its step


class Detached(HostError):
    """The connection was lost while a step ran on the host; the step goes on there."""

    status = "detached"

    def __init__(self, message: str, step: str, remote_dir: str):
        super().__init__(message)
        self.step = step
        self.remote_dir = remote_dir


class PullIncomplete(Detached):
    """A finished step's pull-back stopped (disk full, byte cap, damaged data); the host keeps its copy."""

    status = "incomplete"


def wrapper_script(command: str, timeout_s: float, cleanup: str = "") -> str:
    """``run.sh``: the step under ``timeout``, its log and exit code in its directory, its session ended after it."""
    return (
        "#!/bin/sh\n"
        "# Written by reprokit: runs one step detached from the SSH session.\n"
        'cd "$(dirname "$0")" || exit 1\n'
        "echo $$ > pid\n"
        "if [ -f .secrets.sh ]; then set -a; . ./.secrets.sh; set +a; rm -f .secrets.sh; fi\n"
        # docker reads its --env-file from this descriptor: the file is gone before any container starts
        "if [ -f .secrets.env ]; then exec 3< .secrets.env; rm -f .secrets.env; fi\n"
        f"timeout --kill-after={KILL_AFTER_S} {int(timeout_s)} {command} > step.log 2>&1 < /dev/null\n"
        "rc=$?\n"
        "exec 3<&-\n"
        f"{cleanup + chr(10) if cleanup else ''}"
        # a finished step leaves nothing behind: end what it started in this session (all but this shell)
        'for p in $(pgrep -s $$); do [ "$p" = "$$" ] || kill -KILL "$p" 2>/dev/null; done\n'
        # overwrite the placeholder in place: this needs no new disk space, so it works on a full disk too
        "printf '%-7s\\n' \"$rc\" 1<> exit_code\n"
    )


def read_exit_code(transport: Transport, remote_dir: str) -> int | None:
    """The exit code the wrapper wrote in ``remote_dir``, or None while the step runs (or never started)."""
    text = (transport.read_text(f"{remote_dir}/exit_code") or "").strip()
    return int(text) if text.lstrip("-").isdigit() else None


@dataclass
class DetachedStep:
    """The step in ``remote_dir`` on the transport's host; ``cleanup`` ends what outlives its session."""

    transport: Transport
    pullback: PullBack
    name: str
    remote_dir: str
    cleanup: str = ""

    def launch(self, command: str, timeout_s: float, params: bytes, secrets: tuple[str, str] | None = None) -> None:
        """Write the step's files (``secrets``: a file name and its text, mode 0600) and start it with ``setsid``."""
        transport, remote_dir = self.transport, self.remote_dir
        try:
            transport.sh(f"mkdir -p -- {shell.quote(remote_dir)}")
            transport.write_bytes(f"{remote_dir}/params.json", params)
            if secrets:
                transport.write_private(f"{remote_dir}/{secrets[0]}", secrets[1])
            transport.write_bytes(f"{remote_dir}/exit_code", EXIT_PLACEHOLDER)
            transport.write_text(f"{remote_dir}/run.sh", wrapper_script(command, timeout_s, self.cleanup))
            # setsid -f: the step gets its own session and outlives this SSH channel, which closes at once
            transport.sh(f"cd -- {shell.quote(remote_dir)} && setsid -f sh run.sh >/dev/null 2>&1 < /dev/null")
        except OSError as exc:
            problem = transport.explain(f"cannot start step '{self.name}'", str(exc) or "Failure")
            raise HostError(transport.disk_problem(problem)) from None

    def exit_code(self) -> int | None:
        return read_exit_code(self.transport, self.remote_dir)

    def follow(self, timeout_s: float, started: float, on_line: Callable[[str], None] | None,
               check_stop: Callable[[], None]) -> int:
        """Stream step.log until exit_code appears; reconnect on drops; end the step if it overruns."""
        log_path = f"{self.remote_dir}/step.log"
        offset, pending = 0, b""
        deadline = started + timeout_s + KILL_AFTER_S + REMOTE_GRACE_S
        next_liveness = started + LIVENESS_EVERY_S
        poll_s = POLL_MIN_S
        while True:
            try:
                before = offset
                offset, pending = self._stream(log_path, offset, pending, on_line)
                poll_s = POLL_MIN_S if offset != before else min(POLL_MAX_S, poll_s * 2)
                code = self.exit_code()
                if code is not None:
                    self._stream(log_path, offset, pending + b"\n" if pending else b"", on_line)
                    return code
                if time.monotonic() > deadline:
                    self.stop()
                    return 124
                if time.monotonic() > next_liveness:
                    next_liveness = time.monotonic() + LIVENESS_EVERY_S
                    if not self._session_alive() and self.exit_code() is None:
                        return -1  # the wrapper died without writing its exit code (e.g. killed by the host)
            except LINK_ERRORS as exc:
                if not is_dropped_link(exc):
                    raise
                self.transport.say(f"      connection to {self.transport.host.name} lost during '{self.name}'"
                                   f" ({type(exc).__name__}); reconnecting")
                self.transport.reconnect()
            check_stop()
            time.sleep(poll_s)

    def _session_alive(self) -> bool:
        pid = (self.transport.read_text(f"{self.remote_dir}/pid") or "").strip()
        if not pid.isdigit():
            return True  # not started yet
        code, _, _ = self.transport.sh(f"pgrep -s {pid} >/dev/null", check=False)
        return code == 0

    def _stream(self, path: str, offset: int, pending: bytes, on_line) -> tuple[int, bytes]:
        sftp = self.transport.sftp
        try:
            size = sftp.stat(path).st_size
        except FileNotFoundError:
            return offset, pending
        if size <= offset:
            return offset, pending
        with sftp.open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(min(size - offset, STREAM_READ_BYTES))  # a fast-growing log comes in bounded pieces
        offset += len(data)
        pending += data
        *lines, pending = pending.split(b"\n")
        if len(pending) > STREAM_READ_BYTES:  # a "line" without end is shown in pieces, never held whole
            lines.append(pending)
            pending = b""
        if on_line:
            for line in lines:
                on_line(self.pullback.redactor(line.decode("utf-8", errors="replace")))
        return offset, pending

    def stop(self) -> None:
        """End every process of the step's session on the host (TERM, then KILL) and what outlives it.

        The session, not the process group: GNU ``timeout`` moves itself and the workload into a group of their own.
        """
        transport, remote_dir = self.transport, self.remote_dir
        pid = (transport.read_text(f"{remote_dir}/pid") or "").strip()
        if pid.isdigit():
            transport.sh(f"pkill -TERM -s {pid}; kill -TERM -- -{pid}; sleep 2; pkill -KILL -s {pid}; kill -KILL -- -{pid};"
                         " true", check=False)
        if self.cleanup:
            transport.sh(f"{self.cleanup}; true", check=False)
        transport.sh(f"rm -f -- {shell.path(remote_dir, '.secrets.env')} {shell.path(remote_dir, '.secrets.sh')}",
                     check=False)
        if self.exit_code() is None:
            transport.write_text(f"{remote_dir}/exit_code", "130\n")

    def stop_quietly(self) -> None:
        try:
            self.stop()
        except (ReprokitError, *LINK_ERRORS) as exc:
            self.transport.say(f"      could not end step '{self.name}' on {self.transport.host.name}: {exc}")

    def collect(self, out_dir: Path) -> Listing:
        """Pull a finished step; a stop or a lost host leaves its files on the host for ``invoke collect``."""
        try:
            return self.pullback.pull(self.remote_dir, out_dir)
        except ConnectionLost as exc:
            raise Detached(f"{exc}; step '{self.name}' ended, its files stay on the host", self.name, self.remote_dir) from None
        except PullStopped as exc:
            raise PullIncomplete(str(exc), self.name, self.remote_dir) from None

    def collect_quietly(self, out_dir: Path) -> bool:
        """Bring back what a stopped step wrote; False (and the host keeps it for ``invoke collect``) on any failure."""
        try:
            self.pullback.pull(self.remote_dir, out_dir)
            return True
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - best effort while stopping
            self.transport.say(f"      could not bring back {self.remote_dir} ({type(exc).__name__}: {exc}); it stays on the host")
            return False


__all__ = ["Detached", "DetachedStep", "PullIncomplete", "STOP", "read_exit_code", "wrapper_script"]
