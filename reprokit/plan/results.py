"""A step's result read back into its kind's model: a result that does not match it is the step's error."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reprokit.records.models import StepEntry, StepStatus
from reprokit.step_kinds import ResultError, StepKind


def checked_result(kind: StepKind, entry: StepEntry, record_dir: Path) -> StepEntry:
    """``entry``, or, when its result does not match ``kind``'s model, the entry of a step in error whose reason
    names the file and the field (the result stays in the record, the report and the judge do not read it)."""
    if entry.result is None:
        return entry
    try:
        kind.read_result(entry.result, str(record_dir / (entry.result_file or f"steps/{entry.name}/result.json")))
    except ResultError as exc:
        return replace(entry, status=StepStatus.ERROR, reason=str(exc), result=None)
    return entry
