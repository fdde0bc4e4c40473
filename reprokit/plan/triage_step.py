"""The triage kind's step, run in the control plane on the server logs already pulled back into the record."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from reprokit.records.atomic import write_json_atomic
from reprokit.records.models import StepEntry, StepStatus
from reprokit.records.run_dir import utc_now
from reprokit.triage import triage_files
from reprokit.triage.reconcile import Prediction, prediction_from_static_result

STATIC_KIND = "static-smem"  # the step kind whose result is the static prediction of the same run


def run_step(params: dict[str, Any], record_dir: Path, steps: dict[str, StepEntry], out_dir: Path) -> dict[str, Any]:
    """Triage the logs of the step named by ``logs_from`` (its ``*.log`` and ``*.log.gz`` files)."""
    source = params.get("logs_from", "serve")
    earlier = steps.get(source)
    if earlier is None or earlier.status != StepStatus.OK:
        reason = (earlier.reason if earlier else None) or f"no step '{source}' ran before it"
        state = earlier.status if earlier else "absent"
        return {"status": StepStatus.NOT_RUN, "reason": f"not run: '{source}' did not serve ({state}: {reason})", "result": None}
    source_dir = record_dir / "steps" / source
    if params.get("logs"):  # resolved by the planner from the kind's declared input
        paths = [Path(p) for p in params["logs"]]
    else:
        paths = sorted(p for p in source_dir.rglob("*") if p.is_file() and (p.name.endswith(".log") or p.name.endswith(".log.gz")))
    if not paths:
        return {"status": StepStatus.NOT_RUN, "reason": f"not run: step '{source}' left no logs in {source_dir}", "result": None}
    started = time.monotonic()
    report = triage_files(paths, flashinfer_version=params.get("flashinfer"), predict=_static_predictor(steps))
    result = {"workload": "triage", "schema_version": 1, "status": "ok",
              "logs": [p.relative_to(record_dir).as_posix() for p in paths], **report.to_json()}
    write_json_atomic(out_dir / "result.json", result)
    return {"status": "ok", "reason": None, "result": result, "ended": utc_now(),
            "duration_s": round(time.monotonic() - started, 3), "exit_code": report.exit_code,
            "result_file": f"steps/{out_dir.name}/result.json"}


def _static_predictor(steps: dict[str, StepEntry]):
    """The run's own static-smem step, as the prediction the triage sets beside the failed tactics: used when the
    log's release and arch are the ones it analysed (a step of another release predicts nothing here)."""
    predictions: list[Prediction] = []
    for entry in steps.values():
        if entry.uses == STATIC_KIND and entry.status == StepStatus.OK and entry.has_result:
            predictions.append(prediction_from_static_result(entry.result, entry.result_file or f"steps/{entry.name}/result.json"))

    def predict(version: str, arch: str) -> Prediction | None:
        return next((p for p in predictions if p.flashinfer == version and p.arch == arch), None)

    return predict if predictions else None
