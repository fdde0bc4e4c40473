"""How a run ended, as the front end (``commands/run.py``) reads it to print the verdict and choose the exit code."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reprokit.records.models import RunStatus, Verdict


@dataclass
class RunOutcome:
    """How a run ended; the front end (``commands/run.py``) turns it into the exit code."""

    run_dir: Path
    verdict: Verdict  # verdict.json's; a run not judged has the word of how it ended (DETACHED, ...) and why
    ended: Literal["judged", "host_kept", "interrupted"]  # host_kept: the host keeps the step's files (collect)
    step_errors: bool = False  # a step ended in an error status (StepStatus.is_error): a judged PASS is not a pass

    def to_json(self) -> dict[str, Any]:
        """The verdict as the front end prints it: verdict.json's, or the word (and why) of a run not judged."""
        if self.ended == "judged":
            return self.verdict.to_json()
        word = {"verdict": self.verdict.verdict}
        return word if self.ended == RunStatus.INTERRUPTED else {**word, "summary": self.verdict.summary}
