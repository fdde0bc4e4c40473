"""``invoke collect``: finish a run whose step's files are still on the host.

A run is collectable when its record says so: ``detached`` (the connection was lost), ``incomplete`` (a
pull-back stopped: disk full, byte cap, Ctrl-C) or ``killed`` (the control process died, e.g. SIGKILL; its
manifest still says ``running``). The step still on the host is found through its handle in the record (a
detached session, a Slurm job: ``hosts/launch.py``) and waited for through its launcher, its files are pulled (what is
already here and verified is not moved again), the run is judged and reported, and only then is the host's
copy removed. Any failure leaves the record as it was and the files on the host: collect again later.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from reprokit.config.inventory import Inventory
from reprokit.config.kit import Kit, load_kit_file
from reprokit.errors import ConfigError, HostError
from reprokit.hosts.executor import read_result
from reprokit.hosts.factory import ConnectOptions, executor_for, fanned_out
from reprokit.hosts.host_executor import HostExecutor
from reprokit.hosts.launch import Handle, StepEnd
from reprokit.hosts.pullback import PullStopped
from reprokit.hosts.transport import ConnectionLost
from reprokit.output.hosttext import shown
from reprokit.output.say import Say, silent
from reprokit.phases.conclude import conclude
from reprokit.phases.outcome import RunOutcome
from reprokit.phases.steps import step_entry
from reprokit.plan.results import checked_result
from reprokit.records.atomic import sha256_file
from reprokit.records.events import Collected, HostPruned
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Manifest, RunStatus, StepEntry
from reprokit.records.recorder import Recorder
from reprokit.records.run_dir import KIT_COPY_DIR, MANIFEST, utc_now
from reprokit.records.writer_lock import record_lock
from reprokit.step_kinds import STEP_KINDS

COLLECTABLE = (RunStatus.DETACHED, RunStatus.INCOMPLETE, RunStatus.KILLED)
FINGERPRINT = "fingerprint"


def pending_steps(manifest: Manifest) -> list[str]:
    """The steps whose files may still be on the host: the detached/incomplete one, the one in flight when killed."""
    names = [at.step for at in (manifest.detached, manifest.in_flight) if at]
    if manifest.fingerprint is None:
        names.insert(0, FINGERPRINT)  # the run ended before its fingerprint came back
    return list(dict.fromkeys(n for n in names if n))


def collect_run(run_dir: Path, inventory: Inventory, options: ConnectOptions, kits_dir: Path, say: Say = silent,
                wait_s: float = 3600, force: bool = False) -> RunOutcome:
    """Wait for the run's pending step on the host, pull everything, judge, report, then clean the host.

    One writer at a time: the record's lock is taken before its manifest is read, so a second collect waits and
    then finds the record as the first left it (complete: nothing to collect).
    """
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: no such run record; give runs/<id> or the run id")
    with record_lock(run_dir, say, wait_s):
        return _collect_locked(run_dir, inventory, options, say, wait_s, force)


def _collect_locked(run_dir: Path, inventory: Inventory, options: ConnectOptions, say: Say, wait_s: float,
                    force: bool = False) -> RunOutcome:
    recorder = Recorder.reopen(run_dir)
    manifest = recorder.manifest
    status = manifest.status
    if status == RunStatus.RUNNING and force:
        status = RunStatus.KILLED  # the operator says its control process is gone
    if status == RunStatus.RUNNING:
        raise ConfigError(running_elsewhere(run_dir, manifest))
    if status not in COLLECTABLE:
        raise ConfigError(f"{run_dir}: run is '{status}'; only a detached, incomplete or killed run has files to collect")
    host = fanned_out(inventory, manifest.host or {"name": manifest.host_name})
    if manifest.kit is None or manifest.kit.path is None:
        raise ConfigError(f"{run_dir / MANIFEST}: kit.path: the record does not say which kit file ran; run the kit again")
    kit = load_kit_file(kit_as_ran(run_dir, manifest))
    executor = executor_for(host, inventory, run_dir.parent, options, say)
    pending = pending_steps(manifest)
    handles = {name: step_handle(manifest, name, f"{executor.run_dir(recorder.run_id)}/{name}", executor.launcher.kind)
               for name in pending}
    for name, handle in handles.items():  # before any connection: an edited record reaches nothing on the host
        check_remote_dir(run_dir, handle, f"{executor.run_dir(recorder.run_id)}/{name}")
    executor.attach(recorder.run_id)
    steps = {e.name: e for e in manifest.steps}
    fingerprint = manifest.fingerprint
    try:
        for name, handle in handles.items():
            if not executor.launched(handle):
                if name == FINGERPRINT or name in steps or killed_launching(manifest, status, name):
                    continue  # never started there (it is recorded not run), or already pulled and judged
                raise HostError(f"host '{host.name}': {handle.remote_dir} is gone; step '{name}' cannot be collected")
            end = _wait(executor, handle, name, wait_s, say)
            say(f"pulling back {handle.remote_dir} from {host.name} ...")
            if name == FINGERPRINT:
                fingerprint = _collect_fingerprint(executor, handle, recorder.dir)
            else:
                steps[name] = _collect_step(executor, handle, end, recorder, kit, name)
    except BaseException as exc:
        executor.close_connection()  # what failed leaves no connection open behind it
        if isinstance(exc, ConnectionLost):
            raise HostError(f"{exc}; the record and the host's files are unchanged: collect again later") from None
        if isinstance(exc, PullStopped):
            raise HostError(f"{exc}; the record is unchanged: collect again once that is fixed") from None
        raise
    for name, entry in steps.items():
        if entry.result_file and entry.result is None:
            entry.result, _ = read_result(recorder.dir / "steps" / name)
    for step in kit.steps:
        steps.setdefault(step.name, StepEntry(step.name, step.uses, status="not_run",
                                              reason=f"not run: the run was {status} before this step; run the kit again"))
    collected = Collected([steps[s.name] for s in kit.steps], fingerprint, status, f"collected after the run was {status}")
    outcome = conclude(kit, recorder, steps, fingerprint, before=(collected,))
    executor.finish()
    say(f"collected {recorder.run_id}: {outcome.verdict.verdict}")
    return outcome


def prune_run(run_dir: Path, inventory: Inventory, options: ConnectOptions, say: Say = silent,
              wait_s: float = 3600) -> list[str]:
    """Remove the host's copy of a finished run, kept because some entries could not be pulled (``not_pulled``).

    For after the operator has looked at them there, or accepts losing them: the record keeps their list and says
    when the copy went (``host_pruned``). A run that still has steps to collect is refused: collect it first.
    Returns the record's not-pulled paths, as ``step/path``.
    """
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: no such run record; give runs/<id> or the run id")
    with record_lock(run_dir, say, wait_s):
        recorder = Recorder.reopen(run_dir)
        manifest = recorder.manifest
        if manifest.status in COLLECTABLE or manifest.status == RunStatus.RUNNING:
            raise ConfigError(f"{run_dir}: run is '{manifest.status}'; `invoke collect {recorder.run_id}` first, then --prune"
                              " removes what it could not pull")
        kept = [f"{e.name}/{entry.path}" for e in manifest.steps for entry in e.not_pulled or []]
        if not kept or manifest.host_pruned:
            raise ConfigError(f"{run_dir}: " + (f"the host's copy was already removed ({manifest.host_pruned})" if kept else
                                                "the record lists no entries left on the host; nothing to prune"))
        host = fanned_out(inventory, manifest.host or {"name": manifest.host_name})
        executor = executor_for(host, inventory, run_dir.parent, options, say)
        executor.connect()
        try:
            remote = executor.prune(recorder.run_id)
        except ConnectionLost as exc:
            raise HostError(f"{exc}; the host's copy and the record are unchanged: prune again later") from None
        finally:
            executor.close_connection()
        recorder.record(HostPruned(f"{utc_now()}: removed {remote} on {host.name} with {len(kept)} entries not pulled"))
        for path in kept:
            say(f"pruned from {host.name}: {path!r} (not pulled; gone from the host)")
        return kept


def running_elsewhere(run_dir: Path, manifest: Manifest) -> str:
    """Why a ``running`` record is not collected without ``--force``: its control process may still be at work."""
    owner = manifest.owner
    if owner.hostname != socket.gethostname():
        where = f"on another machine ({shown(owner.hostname)}, pid {owner.pid}): this one cannot see whether it still runs"
    else:
        where = f"by pid {owner.pid}, which is alive on this machine"
    return (f"{run_dir}: the record says the run is still running {where}; if that process (or its machine, a replaced"
            " CI container) is gone, collect with --force")


def check_remote_dir(run_dir: Path, handle: Handle, expected: str) -> None:
    """The step's directory on the host is where the run put it: an edited record's ``remote_dir`` could name any
    directory the SSH user reads (``~/.ssh``), and collect would pull it into the record."""
    if handle.remote_dir.rstrip("/") != expected.rstrip("/"):
        raise ConfigError(f"{run_dir / MANIFEST}: the step's remote_dir {shown(handle.remote_dir)!r} is not the run's"
                          f" directory {expected!r} on the host; the record was edited: restore it")


def kit_as_ran(run_dir: Path, manifest: Manifest) -> Path:
    """The kit file to judge the run with: the record's own copy (``kit/NAME.yml``, runs since #40) while its sha256
    is the manifest's, whatever became of the kit since; for an older record, the kit file itself, unchanged."""
    assert manifest.kit is not None and manifest.kit.path is not None
    copy = run_dir / KIT_COPY_DIR / Path(manifest.kit.path).name
    if manifest.kit.sha256 is not None and copy.is_file() and sha256_file(copy) == manifest.kit.sha256:
        return copy
    check_kit_unchanged(run_dir, manifest)
    return Path(manifest.kit.path)


def check_kit_unchanged(run_dir: Path, manifest: Manifest) -> None:
    """The run is judged by the kit it ran with: a kit file edited since (its sha256 differs) is refused, both named."""
    assert manifest.kit is not None and manifest.kit.path is not None
    path = Path(manifest.kit.path)
    if manifest.kit.sha256 is None or not path.is_file():
        return  # load_kit_file says what is wrong with a missing kit
    now = sha256_file(path)
    if now != manifest.kit.sha256:
        raise ConfigError(f"{path}: the kit changed since run {run_dir.name} ran: sha256 {now} now, {manifest.kit.sha256}"
                          f" in {run_dir / MANIFEST}; restore the kit as it ran (e.g. from version control), then collect"
                          " again")


def killed_launching(manifest: Manifest, status: RunStatus, name: str) -> bool:
    """The run was killed (``status``, as collect takes it) while it launched step ``name``: in flight, but its
    launch never returned a handle."""
    at = manifest.in_flight
    return status == RunStatus.KILLED and at is not None and at.step == name and not at.handle


def step_handle(manifest: Manifest, name: str, remote_dir: str, launcher: str) -> Handle:
    """The record's handle of step ``name`` (a record without one: the host's launcher, found by directory)."""
    for at in (manifest.detached, manifest.in_flight):
        if at and at.step == name and at.handle:
            return Handle.from_json(at.handle, remote_dir)
    return Handle(launcher, "", remote_dir)


def _wait(executor: HostExecutor, handle: Handle, name: str, wait_s: float, say: Say) -> StepEnd:
    deadline = time.monotonic() + wait_s
    while (end := executor.poll(handle)) is None:
        if time.monotonic() > deadline:
            raise HostError(f"host '{executor.host.name}': step '{name}' of run {executor.run_id} is still running after"
                            f" {wait_s:.0f} s; collect again later")
        say(f"waiting for step '{name}' to finish on {executor.host.name} ...")
        time.sleep(min(10.0, max(0.5, deadline - time.monotonic())))
    return end


def _collect_fingerprint(executor: HostExecutor, handle: Handle, run_dir: Path) -> Fingerprint:
    out_dir = run_dir / FINGERPRINT
    out_dir.mkdir(parents=True, exist_ok=True)
    executor.pull(handle, out_dir)
    if (out_dir / "step.log").exists():
        (out_dir / "step.log").replace(out_dir / "fingerprint.log")
    result, problem = read_result(out_dir)
    return Fingerprint.of_workload(result, problem, str(out_dir / "result.json"))


def _collect_step(executor: HostExecutor, handle: Handle, end: StepEnd, recorder: Recorder, kit: Kit,
                  name: str) -> StepEntry:
    out_dir = recorder.step_dir(name)
    listing = executor.pull(handle, out_dir)
    if listing.not_pulled:
        executor.kept_reasons.append(f"{len(listing.not_pulled)} entries of step '{name}' could not be pulled")
    run = executor.workload_run(end, out_dir, 0.0, listing)
    step = next((s for s in kit.steps if s.name == name), None)
    if step is None:
        raise ConfigError(f"{recorder.dir}: step '{name}' is not in {recorder.manifest.kit.path} any more; restore the kit")
    at = recorder.manifest.detached or recorder.manifest.in_flight
    entry = step_entry(run, StepEntry(name, step.uses, status="not_run", started=at.since if at else None), step.timeout,
                       out_dir)
    entry = checked_result(STEP_KINDS[step.uses], entry, recorder.dir)
    entry.collected = True
    return entry
