"""Conclude a run: judge its steps against the kit, record the verdict, write both reports, end the record."""

from __future__ import annotations

from reprokit.config.kit import Kit
from reprokit.phases.outcome import RunOutcome
from reprokit.records.events import Ended, Judged, RunEvent
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import RunStatus, StepEntry
from reprokit.records.recorder import Recorder
from reprokit.report.html import write_html_report
from reprokit.report.judge import judge
from reprokit.report.markdown import write_report


def conclude(kit: Kit, recorder: Recorder, steps: dict[str, StepEntry], fingerprint: Fingerprint | None,
             before: tuple[RunEvent, ...] = ()) -> RunOutcome:
    """Judge, report, and end the record (hashes); ``before``: what is recorded in the verdict's write (a collect's
    steps), so that a collect cut short leaves the record as it was."""
    verdict = judge(kit, steps, fingerprint)
    recorder.record(*before, Judged(verdict))
    write_report(recorder.dir, recorder.manifest, verdict, steps)
    write_html_report(recorder.dir, recorder.manifest, verdict, steps)
    recorder.record(Ended(RunStatus.COMPLETE))
    return RunOutcome(recorder.dir, verdict, "judged", step_errors=any(e.status.is_error for e in steps.values()))
