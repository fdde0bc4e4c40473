"""The session launcher: one step running detached on an SSH host (launch, stream its log, its exit code, stop it,
collect its files). The only module that knows how a session is started and ended (``setsid``, ``pgrep -s``,
``pkill -s``) and what GNU ``timeout``'s exit codes mean; everything above speaks the ``Launcher`` protocol.

The step runs under a wrapper (``setsid``, its own session, a remote ``timeout``), so a dropped connection
never kills it: the control plane reconnects, or leaves the run ``detached`` for ``invoke collect``. When the
step ends, whatever it left running in its session is killed. Its log streams back while it runs; its files
come back through ``pullback.py``, which trusts no path the host sends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import shell
from reprokit.hosts.launch import STOP, Detached, Handle, PullIncomplete, StepEnd, register
from reprokit.hosts.logstream import stream_log
from reprokit.hosts.pullback import Listing, PullBack, PullStopped
from reprokit.hosts.ssh import is_dropped_link
from reprokit.hosts.transport import LINK_ERRORS, ConnectionLost, Transport

POLL_MIN_S, POLL_MAX_S = 0.02, 0.5  # poll fast while a step is short or chatty, back off while it is quiet
KILL_AFTER_S = 10
REMOTE_GRACE_S = 30  # the remote `timeout` should end a step first; the control plane waits this much longer
EXIT_PLACEHOLDER = b"running\n"  # the wrapper overwrites these 8 bytes with the exit code
LIVENESS_EVERY_S = 5.0
TIMEOUT_EXITS = (124, 137)  # GNU timeout: 124 when it ended the step at its limit, 137 (KILL) after --kill-after


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
                    return TIMEOUT_EXITS[0]
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
        return stream_log(self.transport, self.pullback.redactor, path, offset, pending, on_line)

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

    def collect(self, out_dir: Path) -> Listing:
        """Pull a finished step; a stop or a lost host leaves its files on the host for ``invoke collect``."""
        try:
            return self.pullback.pull(self.remote_dir, out_dir)
        except ConnectionLost as exc:
            raise Detached(f"{exc}; step '{self.name}' ended, its files stay on the host", self.name, self.remote_dir) from None
        except PullStopped as exc:
            raise PullIncomplete(str(exc), self.name, self.remote_dir) from None


def session_end(code: int | None) -> StepEnd | None:
    if code is None:
        return None
    return StepEnd(exit_code=code, timed_out=code in TIMEOUT_EXITS)


@register("session")
@dataclass
class SessionLauncher:
    """The ``Launcher`` of an SSH host: each step a ``DetachedStep``, its handle the step directory (and pid)."""

    transport: Transport
    pullback: PullBack
    kind: str = "session"
    steps: dict[str, DetachedStep] = field(default_factory=dict)  # remote dir -> the step launched from here

    @staticmethod
    def lock_dir(host: Host) -> str:
        return f"{host.workdir.rstrip('/')}/lock"

    def _step(self, handle: Handle, name: str = "") -> DetachedStep:
        step = self.steps.get(handle.remote_dir)
        return step or DetachedStep(self.transport, self.pullback, name or handle.remote_dir.rsplit("/", 1)[-1],
                                    handle.remote_dir)

    def launch(self, name: str, remote_dir: str, command: str, timeout_s: float, params: bytes,
               secrets: tuple[str, str] | None = None, cleanup: str = "") -> Handle:
        step = DetachedStep(self.transport, self.pullback, name, remote_dir, cleanup)
        step.launch(command, timeout_s, params, secrets)
        self.steps[remote_dir] = step
        return Handle(self.kind, "", remote_dir)  # the session's pid is in its directory once the wrapper runs

    def poll(self, handle: Handle) -> StepEnd | None:
        return session_end(read_exit_code(self.transport, handle.remote_dir))

    def follow(self, handle: Handle, name: str, timeout_s: float, on_line: Callable[[str], None] | None,
               check_stop: Callable[[], None]) -> StepEnd:
        end = session_end(self._step(handle, name).follow(timeout_s, time.monotonic(), on_line, check_stop))
        assert end is not None
        return end

    def stop(self, handle: Handle) -> None:
        self._step(handle).stop()

    def collect(self, handle: Handle, out_dir: Path) -> Listing:
        return self._step(handle).collect(out_dir)


__all__ = ["Detached", "DetachedStep", "PullIncomplete", "STOP", "SessionLauncher", "read_exit_code", "wrapper_script"]
