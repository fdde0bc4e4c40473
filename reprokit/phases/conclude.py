"""Conclude a run: judge its steps against the kit, write the verdict and both reports, finalise the manifest."""

from __future__ import annotations

from reprokit.config.kit import Kit
from reprokit.phases.outcome import RunOutcome
from reprokit.records.atomic import write_json_atomic
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import RunStatus, StepEntry
from reprokit.records.run_dir import VERDICT, RunRecord
from reprokit.report.html import write_html_report
from reprokit.report.judge import judge
from reprokit.report.markdown import write_report


def conclude(kit: Kit, record: RunRecord, steps: dict[str, StepEntry], fingerprint: Fingerprint | None) -> RunOutcome:
    """Judge, report, and finalise the manifest (hashes)."""
    verdict = judge(kit, steps, fingerprint)
    write_json_atomic(record.dir / VERDICT, verdict.to_json())
    record.update(verdict=verdict.summarised())
    write_report(record.dir, record.manifest, verdict, steps)
    write_html_report(record.dir, record.manifest, verdict, steps)
    record.finish(RunStatus.COMPLETE)
    return RunOutcome(record.dir, verdict, "judged", step_errors=any(e.status.is_error for e in steps.values()))
