"""A kit's step, phase by phase: planned (parameters, inputs staged), launched and collected, checked, recorded.

A host step runs through the executor (``StepSpec`` -> ``WorkloadRun``), a control step in this process
(``plan/control_steps.py``); either way its entry is checked against its kind's result model before it is recorded.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reprokit.config.kit import Kit, Step
from reprokit.hosts.executor import WorkloadRun
from reprokit.hosts.launch import Handle, StepSpec
from reprokit.phases.prepare import PreparedRun
from reprokit.phases.reporter import RunReporter
from reprokit.plan.control_steps import run_control_step
from reprokit.plan.planner import PlannedStep, plan_step
from reprokit.plan.results import checked_result
from reprokit.plan.staging import stage_inputs
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import LeftOnHost, StepAt, StepEntry, StepStatus
from reprokit.records.run_dir import RunRecord, utc_now
from reprokit.workloads.facts.exits import STATUS_OF_EXIT


def plan(step: Step, kit: Kit, kits_dir: Path, fingerprint: Fingerprint, steps: dict[str, StepEntry],
         run: PreparedRun) -> tuple[PlannedStep, StepEntry]:
    """The step planned and its inputs staged on the host, with its entry as it begins (``not_run`` until it ends)."""
    host = run.executor.host
    planned = plan_step(step, kit, kits_dir, fingerprint, steps, host=host)
    entry = StepEntry(step.name, step.uses, status=StepStatus.NOT_RUN, started=utc_now())
    if not planned.skip_reason:
        stage_inputs(planned, run.executor, steps, run.record.dir, run.record.step_dir(step.name))
        entry.inputs = planned.inputs or None
    if planned.skip_reason:
        entry.reason, entry.ended = planned.skip_reason, entry.started
    return planned, entry


def launch_control(planned: PlannedStep, entry: StepEntry, steps: dict[str, StepEntry], record: RunRecord) -> StepEntry:
    """A control step runs here, on the record itself and the earlier steps' entries; its fields are its entry's."""
    fields = run_control_step(planned.kind, planned.params, record.dir, steps, record.step_dir(entry.name))
    return checked_result(planned.kind, replace(entry, **fields), record.dir)


def launch_on_host(step: Step, planned: PlannedStep, entry: StepEntry, run: PreparedRun,
                   reporter: RunReporter) -> tuple[StepEntry, float]:
    """Launch the workload, collect its files, check its result; the entry and how long it ran."""
    record = run.record
    record.update(in_flight=StepAt(step.name, entry.started))
    out_dir = record.step_dir(step.name)
    ran = run.executor.run_step(StepSpec(planned.kind.module, planned.params, out_dir, out_dir / "step.log",
                                         step.timeout, step.name, step.image, reporter.stream,
                                         on_launch=in_flight(record, step.name, entry.started)))
    entry = checked_result(planned.kind, step_entry(ran, entry, step.timeout, out_dir), record.dir)
    prune(out_dir, step.keep)
    return entry, ran.duration_s


def recorded(record: RunRecord, steps: dict[str, StepEntry], entry: StepEntry) -> None:
    """The step's entry into the manifest, and nothing in flight any more."""
    steps[entry.name] = entry
    record.set_step(entry, in_flight=None)


def in_flight(record: RunRecord, step: str, since: str | None):
    """The record's ``in_flight`` with the step's handle, once launched: a killed run is collected through it."""
    def launched(handle: Handle) -> None:
        record.update(in_flight=StepAt(step, since, handle=handle.to_json()))
    return launched


def step_entry(run: WorkloadRun, started: StepEntry, timeout_s: int, out_dir: Path) -> StepEntry:
    """A step's manifest entry from what its workload did (``started``: its entry when it began)."""
    name = started.name
    entry = replace(started, ended=utc_now(), duration_s=run.duration_s, exit_code=run.exit_code,
                    log=f"steps/{name}/step.log", result=run.result)
    if run.timed_out:
        entry.status = StepStatus.TIMEOUT
        entry.reason = run.end_reason or f"timed out after {timeout_s} s; the process group was ended"
    elif run.result is None and run.end_reason:
        entry.status, entry.reason = StepStatus.ERROR, run.end_reason
    elif run.result is None:
        last = _last_line(out_dir / "step.log")
        entry.status = StepStatus.ERROR
        entry.reason = f"exit code {run.exit_code}: {run.result_problem}" + (f"; the log ends with: {last}" if last else "")
    else:
        entry.status, entry.reason = STATUS_OF_EXIT.get(run.exit_code, StepStatus.ERROR), run.result.get("error")
        entry.result_file = f"steps/{name}/result.json"
    # left on the host (links, FIFOs, odd names), never dropped silently
    entry.not_pulled = [LeftOnHost.of_listing(e) for e in getattr(run, "not_pulled", None) or []] or None
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


def prune(out_dir: Path, keep: list[str]) -> None:
    """Drop files the kit does not keep (result.json, params.json and the step log are always kept)."""
    if keep == ["**"]:
        return
    always = {"result.json", "params.json", "step.log"}
    for path in sorted(out_dir.rglob("*")):
        rel = path.relative_to(out_dir)
        if path.is_file() and rel.name not in always and not any(rel.match(p) for p in keep):
            path.unlink()
