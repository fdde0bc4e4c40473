"""The session launcher: one step running detached on its host, over SSH or on this machine (launch, stream its
log, its exit code, stop it, collect its files). The only module that knows how a session is started and ended (``setsid``, ``pgrep -s``,
``pkill -s``), how its processes are confined and swept (a cgroup, a mark in their environment) and what GNU
``timeout``'s exit codes mean; everything above speaks the ``Launcher`` protocol.

The step runs under a wrapper (``setsid``, its own session, a remote ``timeout``), so a dropped connection
never kills it: the control plane reconnects, or leaves the run ``detached`` for ``invoke collect``. When the
step ends, whatever it left running is killed: its cgroup where the host allows one, every process that carries
its mark (``setsid`` escapes the session, not the mark), what is left in its session. Its log streams back while
it runs; its files come back through the connection's puller (``pullback.py``, ``access/local.py``), which trusts
no path the host sends. The wrapper itself is a template, ``hosts/sh/session_step.sh``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import shell
from reprokit.hosts.access.base import Connection, Puller
from reprokit.hosts.launch import STOP, Detached, Handle, PullIncomplete, StepEnd
from reprokit.hosts.logstream import stream_log
from reprokit.hosts.pull_listing import Listing, PullStopped
from reprokit.hosts.retry import Retry
from reprokit.hosts.shell_scripts import library, render
from reprokit.hosts.transport import LINK_ERRORS, ConnectionLost

POLL_MIN_S, POLL_MAX_S = 0.02, 0.5  # poll fast while a step is short or chatty, back off while it is quiet
KILL_AFTER_S = 10
REMOTE_GRACE_S = 30  # the remote `timeout` should end a step first; the control plane waits this much longer
EXIT_PLACEHOLDER = b"running\n"  # the wrapper overwrites these 8 bytes with the exit code
LIVENESS_EVERY_S = 5.0
NEVER_STARTED_AFTER_S = 60.0  # a wrapper writes its pid at once; a run.sh without one for this long never ran
TIMEOUT_EXITS = (124, 137)  # GNU timeout: 124 when it ended the step at its limit, 137 (KILL) after --kill-after


CONFINE_SH = library("confine.sh")  # the confinement's functions (hosts/sh/confine.sh), for the wrapper, reap, stop


def mark_pattern(run_id: str, step: str | None = None) -> str:
    """The ERE of the marks of run ``run_id`` (of its step ``step``): names are letters, digits, '.', '_', '-'."""
    def escaped(name: str) -> str:
        return name.replace(".", "\\.")
    return f"{escaped(run_id)}/{escaped(step) if step else '[^/]*'}"


def wrapper_script(command: str, timeout_s: float, cleanup: str = "") -> str:
    """``run.sh`` (``hosts/sh/session_step.sh``): the step under ``timeout``, confined and marked, its log and exit code
    in its directory; ``cleanup`` ends what outlives the step (its container)."""
    return render("session_step.sh", LIBRARY=library("confine.sh", "step_parts.sh"), KILL_AFTER_S=str(KILL_AFTER_S),
                  TIMEOUT_S=str(int(timeout_s)), COMMAND=command, CLEANUP=cleanup)


def reap_command(run_dir: str, run_id: str) -> str:
    """A host command that ends what every step of a run left running; it prints how many processes are left."""
    return f"{CONFINE_SH.strip()}\nreap {shell.quote(mark_pattern(run_id))} {shell.quote(run_dir)}/*"


def read_exit_code(transport: Connection, remote_dir: str) -> int | None:
    """The exit code the wrapper wrote in ``remote_dir``, or None while the step runs (or never started)."""
    text = (transport.read_text(f"{remote_dir}/exit_code") or "").strip()
    return int(text) if text.lstrip("-").isdigit() else None


def relaunch_policy(transport: Connection) -> Retry:
    """A launch whose link dropped is tried once more after a reconnect and a second's wait (a wrapper whose start
    was asked for writes its pid at once: the second try looks for it first, so the step never runs twice)."""
    return Retry(attempts=2, transient=lambda exc: isinstance(exc, LINK_ERRORS) and transport.dropped(exc),
                 first_delay_s=1.0)


@dataclass
class DetachedStep:
    """The step in ``remote_dir`` on the transport's host; ``cleanup`` ends what outlives its session."""

    transport: Connection
    pullback: Puller
    name: str
    remote_dir: str
    cleanup: str = ""

    def launch(self, command: str, timeout_s: float, params: bytes, secrets: tuple[str, str] | None = None) -> None:
        """Write the step's files (``secrets``: a file name and its text, mode 0600) and start it with ``setsid``.

        A link that drops meanwhile is reopened once: the step is launched again, unless its wrapper already
        runs (its pid file is there)."""
        def launch_once(attempt: int) -> None:
            if attempt > 1 and self.transport.read_text(f"{self.remote_dir}/pid") is not None:
                return None  # the first start got through before the link dropped
            return self._launch(command, timeout_s, params, secrets)

        def reconnect(exc: BaseException, _: float) -> None:
            self.transport.say(f"      connection to {self.transport.host.name} lost while launching"
                               f" '{self.name}' ({type(exc).__name__}); reconnecting")
            self.transport.reconnect()

        try:
            return relaunch_policy(self.transport).run(launch_once, reconnect)
        except OSError as exc:
            raise self._launch_failed(exc) from None

    def _launch_failed(self, exc: OSError) -> HostError:
        problem = self.transport.explain(f"cannot start step '{self.name}'", str(exc) or "Failure")
        return HostError(self.transport.disk_problem(problem))

    def _launch(self, command: str, timeout_s: float, params: bytes, secrets: tuple[str, str] | None) -> None:
        transport, remote_dir = self.transport, self.remote_dir
        transport.sh(f"mkdir -p -- {shell.quote(remote_dir)}")
        transport.write_bytes(f"{remote_dir}/params.json", params)
        if secrets:
            transport.write_private(f"{remote_dir}/{secrets[0]}", secrets[1])
        transport.write_bytes(f"{remote_dir}/exit_code", EXIT_PLACEHOLDER)
        transport.write_text(f"{remote_dir}/run.sh", wrapper_script(command, timeout_s, self.cleanup))
        # setsid -f: the step gets its own session and outlives this SSH channel, which closes at once. Not retried
        # by ``sh``: a second start could run the step twice; ``launch`` looks for its pid file first.
        code, out, err = transport.sh(f"cd -- {shell.quote(remote_dir)} && setsid -f sh run.sh >/dev/null 2>&1 < /dev/null",
                                      check=False, retry=False)
        if code == -1:  # the channel closed with no exit status (its sshd died): the step may have started
            raise EOFError("the connection closed before the launch command's exit status came")
        if code != 0:
            raise HostError(transport.explain("`cd` failed", err or out))

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
                if not self.transport.dropped(exc):
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
        run_id, step = remote_dir.rstrip("/").rsplit("/", 2)[-2:]
        transport.sh(f"{CONFINE_SH.strip()}\nreap {shell.quote(mark_pattern(run_id, step))} {shell.quote(remote_dir)}"
                     " > /dev/null", check=False)
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


@dataclass
class SessionLauncher:
    """The ``Launcher`` of a host reached directly (SSH or this machine): each step a ``DetachedStep``, its handle the step directory (and pid)."""

    transport: Connection
    pullback: Puller
    kind: str = "session"
    steps: dict[str, DetachedStep] = field(default_factory=dict)  # remote dir -> the step launched from here
    in_batch_job: bool = False  # a step runs in the session, not in a scheduler's job

    def usable_nodes(self) -> list[str] | None:
        """A session runs on its one host: no nodes to choose among."""
        return None

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
        end = session_end(read_exit_code(self.transport, handle.remote_dir))
        if end is None and self._never_started(handle.remote_dir):
            return StepEnd(exit_code=None, reason="it never started: the run was stopped while it launched the step")
        return end

    def _never_started(self, remote_dir: str) -> bool:
        """No wrapper ever ran there: no pid file, and no run.sh (or one written long enough ago to have started)."""
        if self.transport.read_text(f"{remote_dir}/pid") is not None:
            return False
        age_s = self.transport.age_s(f"{remote_dir}/run.sh")
        return age_s is None or age_s > NEVER_STARTED_AFTER_S

    def follow(self, handle: Handle, name: str, timeout_s: float, on_line: Callable[[str], None] | None,
               check_stop: Callable[[], None]) -> StepEnd:
        end = session_end(self._step(handle, name).follow(timeout_s, time.monotonic(), on_line, check_stop))
        assert end is not None
        return end

    def stop(self, handle: Handle) -> None:
        self._step(handle).stop()

    def collect(self, handle: Handle, out_dir: Path) -> Listing:
        return self._step(handle).collect(out_dir)

    def reap(self, run_dir: str) -> int:
        """Kill what the run's steps left running (their cgroups, their marked processes); how many are left."""
        run_id = run_dir.rstrip("/").rsplit("/", 1)[-1]
        _, out, _ = self.transport.sh(reap_command(run_dir, run_id), check=False)
        left = out.strip().splitlines()[-1:] or ["0"]
        return int(left[0]) if left[0].isdigit() else 0


__all__ = ["CONFINE_SH", "Detached", "DetachedStep", "PullIncomplete", "STOP", "SessionLauncher", "mark_pattern",
           "read_exit_code", "reap_command", "wrapper_script"]
