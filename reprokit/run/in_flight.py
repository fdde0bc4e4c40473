"""Operate a run while it runs, as SkyPilot's and dstack's users expect: ``status``, ``logs RUN [-f]``, ``cancel RUN``.

Everything goes through the launcher protocol, by the handle the record keeps of the step in flight (or left on the
host), so a session on an SSH host, this machine and a Slurm job are watched and stopped the same way:
``status`` asks each run's launcher whether its step still runs (``poll``), ``logs`` reads the step's log on the
host through its connection (``-f``: until the launcher says it ended), ``cancel`` ends the run's process on this
machine when it is alive and the step on the host (``stop``), keeps what the step wrote there and leaves the record
``killed``, for ``invoke collect`` to bring back.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Inventory
from reprokit.errors import ConfigError, HostError, ReprokitError
from reprokit.hosts.factory import ConnectOptions, executor_for, fanned_out
from reprokit.hosts.host_executor import HostExecutor
from reprokit.hosts.launch import Handle, StepEnd
from reprokit.output.say import Say, silent
from reprokit.records.models import Manifest, RunStatus, StepAt
from reprokit.records.run_dir import RunRecord, load_manifest, pid_alive, utc_now
from reprokit.records.writer_lock import record_lock
from reprokit.run.collect import step_handle

WATCHED = (RunStatus.RUNNING, RunStatus.DETACHED, RunStatus.INCOMPLETE, RunStatus.KILLED)  # a step may be on a host
FOLLOW_POLL_S = 0.5
OWNER_GONE_WAIT_S = 10.0


@dataclass
class RunInFlight:
    """One run whose step is in flight or left on its host, as ``invoke status`` lists it."""

    run_id: str
    status: RunStatus
    host: str
    step: str
    launcher: str
    job_id: str  # the Slurm job id; a session's is its leader's pid on the host, once known (else empty)
    since: str | None
    state: str = ""  # what the launcher says now: running, ended (exit N), or why it could not be asked

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": str(self.status), "host": self.host, "step": self.step,
                "launcher": self.launcher, "job_id": self.job_id, "since": self.since, "state": self.state}


def step_at(manifest: Manifest) -> StepAt | None:
    """The step a run has in flight, or left on its host."""
    return manifest.in_flight or manifest.detached


def runs_in_flight(runs_dir: Path) -> list[tuple[Path, Manifest]]:
    """The records under ``runs_dir`` with a step in flight or on its host, oldest first."""
    found = []
    for run_dir in sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")) \
            if runs_dir.is_dir() else []:
        try:
            manifest = load_manifest(run_dir)
        except ReprokitError:
            continue  # not a record, or a damaged one: `invoke check-record` says why
        if manifest.status in WATCHED and step_at(manifest) is not None:
            found.append((run_dir, manifest))
    return found


def attach(run_dir: Path, inventory: Inventory, options: ConnectOptions,
           say: Say = silent) -> tuple[HostExecutor, Handle, Manifest]:
    """The run's host reached through its executor, and the handle of its step there."""
    manifest = load_manifest(run_dir)
    at = step_at(manifest)
    if manifest.status not in WATCHED or at is None:
        raise ConfigError(f"{run_dir}: run is '{manifest.status}' with no step in flight or on its host; nothing to"
                          " watch or cancel")
    host = fanned_out(inventory, manifest.host or {"name": manifest.host_name})
    executor = executor_for(host, inventory, run_dir.parent, options, say)
    executor.attach(manifest.run_id)
    handle = step_handle(manifest, at.step, f"{executor.run_dir(manifest.run_id)}/{at.step}", executor.launcher.kind)
    return executor, handle, manifest


def describe(run_dir: Path, manifest: Manifest, inventory: Inventory, options: ConnectOptions) -> RunInFlight:
    """One line of ``invoke status``: the record's step and handle, and what its launcher says of it now."""
    at = step_at(manifest)
    assert at is not None
    handle = Handle.from_json(at.handle, at.remote_dir or "")
    row = RunInFlight(manifest.run_id, manifest.status, manifest.host_name, at.step, handle.launcher, handle.id, at.since)
    try:
        executor, handle, _ = attach(run_dir, inventory, options)
    except ReprokitError as exc:
        row.state = f"cannot ask: {exc}"
        return row
    try:
        row.job_id = row.job_id or _session_leader(executor, handle)
        row.state = _state(executor.poll(handle))
    except ReprokitError as exc:
        row.state = f"cannot ask: {exc}"
    finally:
        executor.close_connection()
    return row


def _session_leader(executor: HostExecutor, handle: Handle) -> str:
    pid = (executor.transport.read_text(f"{handle.remote_dir}/pid") or "").strip()
    return pid if pid.isdigit() else ""


def _state(end: StepEnd | None) -> str:
    if end is None:
        return "running"
    if end.reason:
        return f"ended: {end.reason}"
    return "ended (timed out)" if end.timed_out else f"ended (exit {end.exit_code})"


def follow_log(run_dir: Path, inventory: Inventory, options: ConnectOptions, on_line: Callable[[str], None],
               follow: bool = False, poll_s: float = FOLLOW_POLL_S) -> StepEnd | None:
    """Print the step's log from its start; ``follow``: until its launcher says it ended (how it ended, returned)."""
    executor, handle, _ = attach(run_dir, inventory, options)
    offset, pending = 0, b""
    try:
        while True:
            offset, pending = executor.read_log(handle, offset, pending, on_line)
            end = executor.poll(handle) if follow else None
            if not follow or end is not None:
                offset, pending = executor.read_log(handle, offset, pending, on_line)  # what came before it ended
                if pending:
                    on_line(executor.pullback.redactor(pending.decode("utf-8", errors="replace")))
                return end
            time.sleep(poll_s)
    finally:
        executor.close_connection()


def cancel_run(run_dir: Path, inventory: Inventory, options: ConnectOptions, say: Say = silent,
               wait_s: float = 60.0) -> str:
    """End the run: its process on this machine (when alive) and its step on the host. What the step wrote stays on
    the host and the record says ``killed``: ``invoke collect`` brings the files back and releases the host's lock.
    Returns the record's new status detail."""
    manifest = load_manifest(run_dir)
    owner = manifest.owner
    if manifest.status == RunStatus.RUNNING:
        if owner.hostname != socket.gethostname():
            raise ConfigError(f"{run_dir}: run is driven from {owner.hostname} (pid {owner.pid}); cancel it there")
        _end_owner(owner.pid)
    executor, handle, manifest = attach(run_dir, inventory, options, say)
    try:
        executor.stop(handle)
    except ReprokitError as exc:
        raise HostError(f"{exc}; the step of run {manifest.run_id} may still run on {manifest.host_name}") from None
    finally:
        executor.close_connection()
    at = step_at(manifest)
    assert at is not None
    detail = (f"cancelled at {utc_now()} (invoke cancel): step '{at.step}' was ended on {manifest.host_name}; what it"
              f" wrote stays there: `invoke collect {manifest.run_id}` brings it back and frees the host's lock")
    with record_lock(run_dir, say, wait_s):
        record = RunRecord.open_existing(run_dir)
        record.update(status=RunStatus.KILLED, status_detail=detail)
    return detail


def _end_owner(pid: int) -> None:
    """Kill the run's process outright (SIGKILL): it must not go on to its next step or judge a cut-short one."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + OWNER_GONE_WAIT_S
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Alive and not a zombie: a killed process whose parent has not reaped it yet holds no lock and writes nothing."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return pid_alive(pid)
    return state not in ("Z", "X")


__all__ = ["RunInFlight", "attach", "cancel_run", "describe", "follow_log", "runs_in_flight"]
