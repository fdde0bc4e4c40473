"""The headline of a run: the verdict in words with its count, the root causes the steps found (the death first),
drawn from real triage results of the fixture logs."""

from __future__ import annotations

from reprokit.records.models import Judgement, StepEntry, Verdict
from reprokit.report.headline import counted, headline
from reprokit.report.judge import plain
from reprokit.triage import triage_files
from tests.conftest import REPO

LOGS = REPO / "tests" / "fixtures" / "logs"


def triage_entry(log: str) -> StepEntry:
    report = triage_files([LOGS / log])
    result = {"workload": "triage", "schema_version": 1, "status": "ok", "logs": [log], **report.to_json()}
    return StepEntry("triage", "triage", "ok", result=result)


def verdict(word: str, *statuses: str) -> Verdict:
    return Verdict(word, "judge's summary", [Judgement(f"e{i}", "triage", s, "is true", None, "") for i, s in enumerate(statuses)])


def test_the_words_invert_nothing_a_pass_is_reproduced():
    assert counted(verdict("PASS", "PASS", "PASS")) == "reproduced: all 2 expectations held"
    assert counted(verdict("FAIL", "PASS", "FAIL", "INCONCLUSIVE")) == (
        "not reproduced: 1 of 3 expectations did not hold (1 held, 1 could not be judged here)")
    assert counted(verdict("INCONCLUSIVE", "PASS", "INCONCLUSIVE", "INCONCLUSIVE")) == (
        "can't tell here: 1 of 3 expectations held, 2 could not be judged here")


def test_a_fatal_log_puts_the_death_first_with_its_line_process_and_traceback_tail():
    said = headline(verdict("FAIL", "FAIL"), {"triage": triage_entry("sglang-ep8-warmup-fatal.log")})
    lines = said.lines()
    assert said.died
    assert lines[1] == ("cause: the server died at " + str(LOGS / "sglang-ep8-warmup-fatal.log") + ":10, process sglang TP5 EP5:"
                        " Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered")
    assert len(lines) == 2 + 6 and all(line.startswith("  | ") for line in lines[2:])


def test_failing_tactics_are_named_with_a_line_that_shows_them():
    said = headline(verdict("PASS", "PASS"), {"triage": triage_entry("sglang-ep8-0.6.3-ready-autotune-failures.log.gz")})
    assert said.lines()[1] == ("cause: triage: 2 tactic(s) failed to autotune (128x256x128, 256x128x128; 32 line(s)), e.g. "
                               + str(LOGS / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz") + ":174")
    assert not said.died


def test_values_are_written_for_people():
    assert [plain(v) for v in (True, 1.0, ["128x256x128", "256x128x128"], "FATAL", None, [])] == [
        "true", "1", "128x256x128, 256x128x128", "FATAL", "nothing", "nothing"]


def test_a_kit_of_the_fix_or_of_a_healthy_stack_says_so_in_its_words():
    """vllm-cpu-moe (a healthy server's expectations) said "reproduced" on a healthy run, and vllm-cpu-ep-crash
    "not reproduced" while its crash reproduced: the words follow what the expectations describe."""
    fixed, healthy = verdict("PASS", "PASS", "PASS"), verdict("FAIL", "PASS", "FAIL", "FAIL")
    fixed.describes, healthy.describes = "fix", "health"
    assert counted(fixed) == "fixed: all 2 expectations held"
    assert counted(healthy) == "not healthy: 2 of 3 expectations did not hold (1 held)"
    unjudged = verdict("INCONCLUSIVE", "INCONCLUSIVE")
    unjudged.describes = "health"
    assert counted(unjudged) == "can't tell here: 0 of 1 expectations held, 1 could not be judged here"


def test_the_judge_writes_what_the_kit_describes_and_nothing_for_the_bug(tmp_path):
    from reprokit.config.kit import load_kit_file  # noqa: PLC0415
    from reprokit.report.judge import judge  # noqa: PLC0415

    steps = {"triage": triage_entry("sglang-ep8-0.6.3-ready-autotune-failures.log.gz")}
    assert judge(load_kit_file(REPO / "kits" / "vllm-cpu-ep-crash.yml"), steps, None).describes == "health"
    assert judge(load_kit_file(REPO / "kits" / "ep8-crash-fixed.yml"), steps, None).describes == "fix"
    bug = judge(load_kit_file(REPO / "kits" / "ep8-crash.yml"), steps, None)
    assert bug.describes is None and "describes" not in bug.to_json()  # a bug kit's verdict.json is as before
