"""One run of a kit on a host: fingerprint, steps, judgement, report, all into a run record.

inventory + kit -> plan -> executor -> workload -> run record -> judge -> report.
Inputs are validated, the host connected and locked before the run directory
is created, so bad input or an unusable host leaves nothing behind. Ctrl-C or
SIGTERM ends the running workload and leaves the manifest ``interrupted``; a
connection lost for good leaves it ``detached`` for ``invoke collect``.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from reprokit.config.inventory import Host, Inventory
from reprokit.config.kit import Kit
from reprokit.errors import ConfigError
from reprokit.hosts.executor import Executor
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.launch import Detached, Handle, StepSpec
from reprokit.images.build import built_images
from reprokit.judge import judge
from reprokit.plan.control_steps import run_control_step
from reprokit.plan.inputs import resolve_inputs
from reprokit.plan.planner import PlannedStep, plan_step
from reprokit.plan.results import checked_result
from reprokit.records.atomic import RecordUnwritable, sha256_file, write_json_atomic
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.lock import hold_record
from reprokit.records.models import StepAt, StepEntry, StepStatus, Verdict
from reprokit.records.run import VERDICT, RunRecord, new_run_id, utc_now
from reprokit.report.html import write_html_report
from reprokit.report.markdown import write_report
from reprokit.report.reasons import SaidOnce
from reprokit.say import Say, silent
from reprokit.secrets import collect_secrets
from reprokit.step_kinds import STEP_KINDS
from reprokit.workloads.facts.exits import STATUS_OF_EXIT

FINGERPRINT_TIMEOUT_S = 120


@dataclass
class RunOutcome:
    """How a run ended; the front end (``commands/run.py``) turns it into the exit code."""

    run_dir: Path
    verdict: Verdict  # verdict.json's; a run not judged has the word of how it ended (DETACHED, ...) and why
    ended: Literal["judged", "host_kept", "interrupted"]  # host_kept: the host keeps the step's files (collect)
    step_errors: bool = False  # a step ended in an error status (STEP_ERRORS): a judged PASS is not a pass

    def to_json(self) -> dict[str, Any]:
        """The verdict as the front end prints it: verdict.json's, or the word (and why) of a run not judged."""
        if self.ended == "judged":
            return self.verdict.to_json()
        word = {"verdict": self.verdict.verdict}
        return word if self.ended == "interrupted" else {**word, "summary": self.verdict.summary}


def _sigterm_as_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run_kit(
    kit: Kit,
    kit_path: Path,
    host: Host,
    runs_dir: Path,
    kits_dir: Path,
    say: Say = silent,
    stream: Say | None = None,
    inventory: Inventory | None = None,
    options: ConnectOptions | None = None,
    selection: dict[str, Any] | None = None,
) -> RunOutcome:
    """``selection``: the steps chosen and parameters overridden on the command line (--only/--skip/--set), recorded."""
    options = options or ConnectOptions()
    inventory = inventory or Inventory(path=None, hosts={host.name: host})
    check_images(kit, options.images)  # before any host is reached
    built = built_images(host.name, kit.kit)  # what `invoke build --host` made there; --image overrides
    options = replace(options, images={**built, **options.images})
    executor = executor_for(host, inventory, runs_dir, options, say)
    secrets = kit_secrets(kit, say)
    run_id = new_run_id(kit.kit, host.name)
    executor.connect()  # host keys, auth, reachability: fail before anything is written
    executor.prepare(run_id, secrets)  # the host's lock, the workload code
    try:
        record = RunRecord.create(
            runs_dir,
            run_id,
            kit={"name": kit.kit, "path": str(kit_path), "sha256": sha256_file(kit_path), "description": kit.description.strip()},
            pins=dict(kit.pins),
            host=host.describe(),
            images={name: image_entry(img.dockerfile, options.images.get(name), host) for name, img in kit.images.items()},
            secrets=sorted(secrets),  # names only
            selection=selection or {"only": [], "skip": [], "set": {}},
            fingerprint=None,
            verdict=None,
        )
        release_record = hold_record(record.dir)  # one writer per record: a collect of it waits for this run
    except BaseException:
        executor.finish()
        raise
    pins = ", ".join(f"{k} {v}" for k, v in kit.pins.items())
    say(f"run {run_id}: kit {kit.kit} on host {host.name} ({host.runtime}); pins: {pins}")
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt) if in_main_thread else None
    detached = False
    try:
        return _run(kit, executor, record, kits_dir, say, stream)
    except Detached as exc:  # the host keeps the step's files: `invoke collect` brings them back
        detached = exc.status == "detached"  # an unreachable host cannot be cleaned up; an incomplete pull can
        mark_unpulled(record, exc.status, str(exc), exc.step, exc.handle)
        say(f"warning: {exc.status}: {exc}. Bring the run back later with `invoke collect {run_id}`")  # shown when quiet too
        return RunOutcome(record.dir, Verdict(exc.status.word, str(exc)), "host_kept")
    except KeyboardInterrupt:
        pending = executor.pending()
        if pending:
            step, handle = next(iter(pending.items()))
            detail = f"stopped by Ctrl-C or SIGTERM; step '{step}' was ended, its files stay on the host"
            mark_unpulled(record, "incomplete", detail, step, handle)
            say(f"warning: interrupted; {detail}: `invoke collect {run_id}` brings them back")
        else:
            record.finish("interrupted", status_detail="stopped by Ctrl-C or SIGTERM; the running workload was ended")
            say(f"warning: interrupted; partial record in {record.dir}")
        return RunOutcome(record.dir, Verdict("INTERRUPTED", ""), "interrupted")
    except RecordUnwritable as exc:  # this machine refused the write: the host keeps the step, collect finishes it
        return kept_unwritable(record, executor, exc, say)
    except BaseException as exc:
        pending = executor.pending()
        if pending:
            step, handle = next(iter(pending.items()))
            mark_unpulled(record, "incomplete", f"{type(exc).__name__}: {exc}", step, handle)
        else:
            record.finish("failed", status_detail=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
        if not detached and (left := executor.finish(keep_remote=options.keep_remote)):
            record.update(host_left=left)  # a process of the run survived its kill: the host's lock stays
        release_record()


def kit_secrets(kit: Kit, say: Say) -> dict[str, str]:
    """The kit's secrets set in the environment; each one missing is said, and the run goes on without it."""
    secrets = collect_secrets(kit.secrets)
    for name in kit.secrets:
        if name not in secrets:
            say(f"warning: secret {name} is not set in the environment; the run goes on without it")
    return secrets


def kept_unwritable(record: RunRecord, executor: Executor, exc: RecordUnwritable, say: Say) -> RunOutcome:
    """This machine cannot write the record: with a step still on the host, the run ends ``incomplete`` in one line."""
    pending = executor.pending()
    if not pending:
        raise exc
    mark_unpulled(record, "incomplete", str(exc), *next(iter(pending.items())))
    say(f"warning: incomplete: {exc}; the files stay on host '{executor.host.name}'. Bring the run back later with"
        f" `invoke collect {record.dir.name}`")
    return RunOutcome(record.dir, Verdict("INCOMPLETE", str(exc)), "host_kept")


def _run(kit: Kit, executor: Executor, record: RunRecord, kits_dir: Path, say: Say, stream: Say | None) -> RunOutcome:
    total = len(kit.steps) + 1
    say(f"[1/{total}] fingerprint ...")
    first_image = next((s.image for s in kit.steps if s.image), None)
    fp_dir = record.dir / "fingerprint"
    fp_run = executor.run_step(StepSpec("reprokit.workloads.fingerprint", {}, fp_dir, fp_dir / "fingerprint.log",
                                        FINGERPRINT_TIMEOUT_S, "fingerprint", first_image, stream,
                                        on_launch=in_flight(record, "fingerprint", utc_now())))
    fingerprint = Fingerprint.of_workload(fp_run.result, fp_run.end_reason or fp_run.result_problem,
                                          str(fp_dir / "result.json"))
    drift = pin_drift(kit.pins, fingerprint.packages)
    record.update(fingerprint=fingerprint, pin_drift=drift, in_flight=None)
    for name, versions in drift.items():
        say(f"      note: {name} is pinned to {versions['pinned']} but {versions['installed'] or 'not installed'} on the host")
    gpus = fingerprint.devices
    host = executor.host
    if host.gpu_count is not None and not host.cpu_only and len(gpus) != host.gpu_count:
        note = (f"the inventory says {host.gpu_count} GPU(s) on {host.name}, the workloads see {len(gpus)}"
                + (" in their container: check the NVIDIA Container Toolkit (`invoke provision --check`)" if host.runtime == "docker" else ""))
        record.update(preflight_notes=[note])
        say(f"      warning: {note}")
    if gpus:
        names = sorted({f"{d.name} ({d.gpu_arch}, {d.multiprocessor_count} SMs)" for d in gpus})
        say(f"      {len(gpus)} GPU(s): {', '.join(names)}")
    else:
        say(f"      no GPU: {fingerprint.gpu_reason}")

    steps: dict[str, StepEntry] = {}
    once = SaidOnce(None if gpus else fingerprint.gpu_reason)  # a reason is said once on the console
    for number, step in enumerate(kit.steps, start=2):
        planned = plan_step(step, kit, kits_dir, fingerprint, steps, host_cpu_only=executor.host.cpu_only,
                            host=executor.host)
        entry = StepEntry(step.name, step.uses, status="not_run", started=utc_now())
        if not planned.skip_reason:
            stage_inputs(planned, executor, steps, record.dir, record.step_dir(step.name))
            entry.inputs = planned.inputs or None
        if planned.skip_reason:
            entry.reason, entry.ended = planned.skip_reason, entry.started
            say(f"[{number}/{total}] {step.name} ({step.uses}) ... {once(planned.skip_reason)}")
        elif planned.kind.where == "control":
            say(f"[{number}/{total}] {step.name} ({step.uses}) ...")
            fields = run_control_step(planned.kind, planned.params, record.dir, steps, record.step_dir(step.name))
            entry = checked_result(planned.kind, replace(entry, **fields), record.dir)
            say(f"      {entry.status}" + (f": {once(entry.reason)}" if entry.reason else "")
                + (f": {entry.result['verdict']}" if entry.result and "verdict" in entry.result else ""))
        else:
            say(f"[{number}/{total}] {step.name} ({step.uses}) ...")
            record.update(in_flight=StepAt(step.name, entry.started))
            out_dir = record.step_dir(step.name)
            run = executor.run_step(StepSpec(planned.kind.module, planned.params, out_dir, out_dir / "step.log",
                                             step.timeout, step.name, step.image, stream,
                                             on_launch=in_flight(record, step.name, entry.started)))
            entry = checked_result(planned.kind, step_entry(run, entry, step.timeout, out_dir), record.dir)
            _prune(out_dir, step.keep)
            detail = entry.reason or ""
            say(f"      {entry.status} in {run.duration_s:.1f} s" + (f": {once(detail)}" if detail else ""))
        steps[step.name] = entry
        record.manifest.in_flight = None
        record.set_step(entry)
    return conclude(kit, record, steps, fingerprint)


def check_images(kit: Kit, images: dict[str, str]) -> None:
    """An ``--image NAME=REF`` the kit does not declare is a typo, refused before the host (exit 2)."""
    for name in sorted(set(images) - set(kit.images)):
        declared = ", ".join(sorted(kit.images)) or "none"
        raise ConfigError(f"--image {name}={images[name]}: kit {kit.kit} declares no image '{name}' (its images: {declared});"
                          " name one of them")


def in_flight(record: RunRecord, step: str, since: str | None):
    """The record's ``in_flight`` with the step's handle, once launched: a killed run is collected through it."""
    def launched(handle: Handle) -> None:
        record.update(in_flight=StepAt(step, since, handle=handle.to_json()))
    return launched


def mark_unpulled(record: RunRecord, status: str, detail: str, step: str, handle: Handle) -> None:
    """A record whose step's files are still on the host (``detached`` or ``incomplete``), for ``invoke collect``.

    Where this machine cannot write the record any more, it stays as last written (``running``, the step's handle in
    ``in_flight``): ``invoke collect`` reads that as a killed run once the directory is writable again.
    """
    with contextlib.suppress(RecordUnwritable):
        record.update(status=status, status_detail=detail, in_flight=None,
                      detached=StepAt(step, utc_now(), handle.remote_dir, handle.to_json()))


def stage_inputs(planned: PlannedStep, executor: Executor, steps: dict[str, StepEntry], record_dir: Path,
                 out_dir: Path) -> None:
    """Check the step's host paths, resolve its declared inputs and stage them on the host (or say why not).

    The workload's parameters then name the staged files' host-side paths, never this machine's.
    """
    host = executor.host
    for param, path, variable in planned.host_paths:
        if not executor.host_path_exists(path):
            name = path.rsplit("/", 1)[-1]
            fix = (f"pass where it is: --set {planned.name}.{param}=/path/to/{name}" if host.is_local else  # no inventory entry
                   f"set `{variable}` for the host in inventory.yml (now {getattr(host, variable)}) to the directory"
                   f" that holds {name}")
            planned.skip_reason = f"not run: {param} {path} is not on host '{host.name}'; put it there, or {fix}"
            return
    files, reason = resolve_inputs(planned.kind, planned.params, steps, record_dir)
    if reason:
        planned.skip_reason = reason
        return
    if planned.kind.where == "control":  # control steps read the record itself
        staged = [(f, str(f.source)) for f in files]
    else:
        staged = executor.stage_inputs(planned.name, out_dir, files)
    for spec in planned.kind.inputs:
        paths = [path for f, path in staged if f.param == spec.param]
        if paths:
            planned.params[spec.param] = paths if planned.kind.where == "control" else paths[0]
    planned.inputs = [f.describe(path) for f, path in staged]


def image_entry(dockerfile: str, ref: str | None, host: Host) -> dict[str, Any]:
    """The manifest's record of an image: its reference and, when the reference pins one, its digest."""
    digest = ref.split("@", 1)[1] if ref and "@sha256:" in ref else None
    if not host.in_container:
        return {"dockerfile": dockerfile, "ref": None, "digest": None, "note": "native runtime: no image ran"}
    return {"dockerfile": dockerfile, "ref": ref, "digest": digest}


def step_entry(run, started: StepEntry, timeout_s: int, out_dir: Path) -> StepEntry:
    """A step's manifest entry from what its workload did (``started``: its entry when it began)."""
    name = started.name
    entry = replace(started, ended=utc_now(), duration_s=run.duration_s, exit_code=run.exit_code,
                    log=f"steps/{name}/step.log", result=run.result)
    if run.timed_out:
        entry.status, entry.reason = "timeout", run.end_reason or f"timed out after {timeout_s} s; the process group was ended"
    elif run.result is None and run.end_reason:
        entry.status, entry.reason = "error", run.end_reason
    elif run.result is None:
        last = _last_line(out_dir / "step.log")
        entry.status = "error"
        entry.reason = f"exit code {run.exit_code}: {run.result_problem}" + (f"; the log ends with: {last}" if last else "")
    else:
        entry.status, entry.reason = STATUS_OF_EXIT.get(run.exit_code, StepStatus.ERROR), run.result.get("error")
        entry.result_file = f"steps/{name}/result.json"
    # left on the host (links, FIFOs, odd names), never dropped silently
    entry.not_pulled = getattr(run, "not_pulled", None) or None
    entry.launch = getattr(run, "launch", None) or None
    return entry


def _last_line(log: Path, max_chars: int = 300) -> str:
    try:
        with open(log, "rb") as fh:
            fh.seek(max(0, log.stat().st_size - 8192))
            lines = [line.strip() for line in fh.read().decode("utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    meaningful = [line for line in lines if not line.startswith("Run 'docker run --help'")]
    return (meaningful or [""])[-1][:max_chars]


def conclude(kit: Kit, record: RunRecord, steps: dict[str, StepEntry], fingerprint: Fingerprint | None) -> RunOutcome:
    """Judge, report, and finalise the manifest (hashes)."""
    verdict = judge(kit, steps, fingerprint)
    write_json_atomic(record.dir / VERDICT, verdict.to_json())
    record.update(verdict=verdict.summarised())
    write_report(record.dir, record.manifest, verdict, steps)
    write_html_report(record.dir, record.manifest, verdict, steps)
    record.finish("complete")
    return RunOutcome(record.dir, verdict, "judged",
                      step_errors=any(e.status.is_error for e in steps.values()))


def pin_drift(pins: dict[str, str], installed: dict[str, str | None]) -> dict[str, dict[str, str | None]]:
    """Pinned packages whose version on the host differs (the native runtime runs the host's own packages)."""
    return {
        name: {"pinned": version, "installed": installed[name]}
        for name, version in pins.items()
        if name in installed and installed[name] is not None and installed[name].split("+")[0] != version
    }


def _prune(out_dir: Path, keep: list[str]) -> None:
    """Drop files the kit does not keep (result.json, params.json and the step log are always kept)."""
    if keep == ["**"]:
        return
    always = {"result.json", "params.json", "step.log"}
    for path in sorted(out_dir.rglob("*")):
        rel = path.relative_to(out_dir)
        if path.is_file() and rel.name not in always and not any(rel.match(p) for p in keep):
            path.unlink()


def step_kinds_table() -> list[tuple[str, str, str, str]]:
    return [(k.name, k.where, "yes" if k.implemented else "not yet", k.summary) for k in STEP_KINDS.values()]
