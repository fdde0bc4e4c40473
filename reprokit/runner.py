"""One run of a kit on a host: fingerprint, steps, judgement, report, all into a run record.

inventory + kit -> plan -> executor -> workload -> run record -> judge -> report.
Everything is validated before the run directory is created, so bad input
leaves nothing behind. Ctrl-C or SIGTERM ends the running workload's process
group and leaves the manifest saying ``interrupted``.
"""

from __future__ import annotations

import signal

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from reprokit.config.inventory import Host
from reprokit.config.kit import Kit
from reprokit.errors import ExitCode
from reprokit.hosts.executor import executor_for
from reprokit.judge import FAIL, INCONCLUSIVE, PASS, judge
from reprokit.plan.planner import plan_step
from reprokit.plan.steps import STEP_KINDS
from reprokit.records.atomic import sha256_file, write_json_atomic
from reprokit.records.run import RunRecord, new_run_id, utc_now
from reprokit.report.markdown import write_report

WORKLOAD_STATUS_BY_EXIT = {0: "ok", 2: "bad_params", 3: "no_driver", 4: "no_device", 5: "check_failed", 6: "missing_dependency"}
EXIT_BY_VERDICT = {PASS: ExitCode.PASS, FAIL: ExitCode.FAIL, INCONCLUSIVE: ExitCode.INCONCLUSIVE}
FINGERPRINT_TIMEOUT_S = 120


@dataclass
class RunOutcome:
    run_dir: Path
    verdict: dict[str, Any]
    exit_code: ExitCode


Say = Callable[[str], None]


def _sigterm_as_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _pins_text(kit: Kit) -> str:
    return ", ".join(f"{k} {v}" for k, v in kit.pins.items())


def run_kit(
    kit: Kit,
    kit_path: Path,
    host: Host,
    runs_dir: Path,
    kits_dir: Path,
    say: Say = print,
    stream: Say | None = None,
) -> RunOutcome:
    executor = executor_for(host)  # raises HostError before anything is written
    run_id = new_run_id(kit.kit, host.name)
    record = RunRecord.create(
        runs_dir,
        run_id,
        kit={"name": kit.kit, "path": str(kit_path), "sha256": sha256_file(kit_path), "description": kit.description.strip()},
        pins=dict(kit.pins),
        host=host.describe(),
        images={name: {"dockerfile": img.dockerfile, "digest": None} for name, img in kit.images.items()},
        fingerprint=None,
        verdict=None,
    )
    say(f"run {run_id}: kit {kit.kit} on host {host.name} ({host.runtime}); pins: {_pins_text(kit)}")
    previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        return _run(kit, host, executor, record, kits_dir, say, stream)
    except KeyboardInterrupt:
        record.finish("interrupted", status_detail="stopped by Ctrl-C or SIGTERM; the running workload was ended")
        say(f"interrupted; partial record in {record.dir}")
        return RunOutcome(record.dir, {"verdict": "INTERRUPTED"}, ExitCode.INTERRUPTED)
    except BaseException as exc:
        record.finish("failed", status_detail=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(kit, host, executor, record: RunRecord, kits_dir: Path, say: Say, stream: Say | None) -> RunOutcome:
    total = len(kit.steps) + 1
    say(f"[1/{total}] fingerprint ...")
    fp_dir = record.dir / "fingerprint"
    fp_run = executor.run_workload(
        "reprokit.workloads.fingerprint", {}, fp_dir, fp_dir / "fingerprint.log", FINGERPRINT_TIMEOUT_S, stream
    )
    fingerprint = fp_run.result or {"gpu_status": "unknown", "gpu_reason": fp_run.result_problem, "devices": []}
    fingerprint.pop("workload", None)
    drift = pin_drift(kit.pins, fingerprint.get("packages") or {})
    record.update(fingerprint=fingerprint, pin_drift=drift)
    for name, versions in drift.items():
        say(f"      note: {name} is pinned to {versions['pinned']} but {versions['installed'] or 'not installed'} on the host")
    gpus = fingerprint.get("devices") or []
    if gpus:
        names = sorted({f"{d['name']} ({d['gpu_arch']}, {d['multiprocessor_count']} SMs)" for d in gpus})
        say(f"      {len(gpus)} GPU(s): {', '.join(names)}")
    else:
        say(f"      no GPU: {fingerprint.get('gpu_reason')}")

    steps: dict[str, dict[str, Any]] = {}
    step_errors = 0
    for number, step in enumerate(kit.steps, start=2):
        planned = plan_step(step, kit, kits_dir, fingerprint, steps)
        entry: dict[str, Any] = {"name": step.name, "uses": step.uses, "started": utc_now()}
        if planned.skip_reason:
            entry.update(status="not_run", reason=planned.skip_reason, ended=entry["started"], result=None)
            say(f"[{number}/{total}] {step.name} ({step.uses}) ... {planned.skip_reason}")
        elif planned.kind.where == "control":
            entry.update(status="not_run", reason="control-plane steps are not wired in this version", result=None)
        else:
            say(f"[{number}/{total}] {step.name} ({step.uses}) ...")
            out_dir = record.step_dir(step.name)
            run = executor.run_workload(
                planned.kind.module, planned.params, out_dir, out_dir / "step.log", step.timeout, stream
            )
            entry.update(ended=utc_now(), duration_s=run.duration_s, exit_code=run.exit_code, log=f"steps/{step.name}/step.log")
            if run.timed_out:
                entry.update(status="timeout", reason=f"timed out after {step.timeout} s; the process group was ended")
            elif run.result is None:
                entry.update(status="error", reason=f"exit code {run.exit_code}: {run.result_problem}")
            else:
                status = WORKLOAD_STATUS_BY_EXIT.get(run.exit_code, "error")
                entry.update(status=status, reason=run.result.get("error"))
                entry["result_file"] = f"steps/{step.name}/result.json"
                entry["result_path"] = str(out_dir / "result.json")
            if entry["status"] in ("timeout", "error", "bad_params"):
                step_errors += 1
            entry["result"] = run.result
            _prune(out_dir, step.keep)
            detail = entry.get("reason") or ""
            say(f"      {entry['status']} in {run.duration_s:.1f} s" + (f": {detail}" if detail else ""))
        steps[step.name] = entry
        record.set_step({k: v for k, v in entry.items() if k not in ("result", "result_path")})

    verdict = judge(kit, steps, fingerprint)
    write_json_atomic(record.dir / "verdict.json", verdict)
    record.update(verdict={"verdict": verdict["verdict"], "summary": verdict["summary"]})
    write_report(record.dir, record.manifest, verdict, steps)
    record.finish("complete")
    code = EXIT_BY_VERDICT[verdict["verdict"]]
    if step_errors and code != ExitCode.FAIL:
        code = ExitCode.STEP_ERROR
    return RunOutcome(record.dir, verdict, code)


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
    return [
        (k.name, k.where, "yes" if k.implemented else "not yet", k.summary)
        for k in STEP_KINDS.values()
    ]


__all__ = ["run_kit", "RunOutcome", "step_kinds_table"]
