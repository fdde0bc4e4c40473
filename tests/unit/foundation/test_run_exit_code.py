"""The run front end, not the runner, turns how a run ended into its exit code (one code per ending)."""

from pathlib import Path

import pytest

from reprokit.commands.run import run_exit_code, run_next_step
from reprokit.errors import ExitCode
from reprokit.phases.outcome import RunOutcome
from reprokit.records.models import Judgement, Verdict


@pytest.mark.parametrize("verdict, ended, step_errors, code", [
    ("PASS", "judged", False, ExitCode.PASS),
    ("FAIL", "judged", False, ExitCode.FAIL),
    ("INCONCLUSIVE", "judged", False, ExitCode.INCONCLUSIVE),
    ("PASS", "judged", True, ExitCode.STEP_ERROR),  # a step error is not a pass
    ("INCONCLUSIVE", "judged", True, ExitCode.STEP_ERROR),
    ("FAIL", "judged", True, ExitCode.FAIL),  # a failed expectation stays a failure
    ("DETACHED", "host_kept", False, ExitCode.HOST_ERROR),
    ("INCOMPLETE", "host_kept", False, ExitCode.HOST_ERROR),
    ("INTERRUPTED", "interrupted", False, ExitCode.INTERRUPTED),
])
def test_each_ending_has_one_exit_code(verdict, ended, step_errors, code):
    outcome = RunOutcome(Path("runs/x"), Verdict(verdict, "why"), ended, step_errors=step_errors)
    assert run_exit_code(outcome) is code


def test_the_front_end_prints_what_each_ending_says():
    judged = Verdict("PASS", "all 1 expectations held", [Judgement("a", "probe", "PASS", "equals 1", 1, "")])
    assert RunOutcome(Path("runs/x"), judged, "judged").to_json() == judged.to_json()
    assert RunOutcome(Path("runs/x"), Verdict("DETACHED", "the host went away"), "host_kept").to_json() == {
        "verdict": "DETACHED", "summary": "the host went away"}
    assert RunOutcome(Path("runs/x"), Verdict("INTERRUPTED", ""), "interrupted").to_json() == {"verdict": "INTERRUPTED"}


@pytest.mark.parametrize("verdict, describes, said", [
    ("PASS", None, "`invoke fix --kit k` (the workaround), `invoke report --upstream 1a2b` (the bug report)"),
    ("PASS", "fix", "`invoke compare 1a2b OTHER_RUN` shows what differs from another run of the kit (one that failed)"),
    ("PASS", "health", "`invoke compare 1a2b OTHER_RUN` shows what differs from another run of the kit (one that failed)"),
    ("FAIL", None, "`invoke summary -r 1a2b` shows what did not hold; `invoke compare 1a2b OTHER_RUN` what changed"),
    ("FAIL", "health", "`invoke summary -r 1a2b` shows what did not hold; `invoke report --upstream 1a2b` drafts the bug"
                       " report"),
])
def test_the_next_step_follows_what_the_expectations_describe(verdict, describes, said):
    """A healthy smoke run was told to apply the workaround and report the bug; a crash that failed a healthy
    server's expectations was told only to compare."""
    outcome = RunOutcome(Path("runs/20261206T105001Z-k-here-1a2b"), Verdict(verdict, "why", [], describes), "judged")
    assert run_next_step("k", outcome, run_exit_code(outcome)) == said
