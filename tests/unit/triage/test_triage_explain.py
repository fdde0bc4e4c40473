"""`invoke triage --explain`: the deciding rule, its line, the process and why it is dead or alive, for each verdict."""

import subprocess
import sys
from pathlib import Path

from reprokit.triage import render_explain, triage_files
from reprokit.triage.rules import RULES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REAL = FIXTURES / "real"


def explain(path: Path) -> list[str]:
    return render_explain(triage_files([path])).splitlines()


def test_fatal_names_the_rule_the_line_and_the_dead_process():
    log = REAL / "sglang-12567-tp7-dies-after-serving.log"
    lines = explain(log)
    assert lines[0] == "verdict: FATAL (exit 11)"
    assert lines[1].startswith("rule:    death_reported (rule 1 of 12): ")
    assert lines[2] == f"line:    {log}:2: Scheduler hit an exception: Traceback (most recent call last):"
    assert lines[3] == "why:     nothing after it shows sglang TP7 alive"
    assert lines[4] == "process: sglang TP7 (scheduler; stack sglang, torch; lines 2-10)"
    assert lines[5] == "  last record: line 10: ^^^^^^^^^^^^^^^^^^^^^"  # the traceback's caret line, cut
    assert lines[6] == ("  dead: its last record is an exception logged at ERROR (line 2) and nothing after it shows "
                        "it alive")
    assert f"  {log}: sglang TP0 (scheduler, alive): alive: its last record (line 1) is no exception" in lines


def test_fatal_from_the_process_model_alone():
    """No fatal phrase: the API server's last records are a traceback, and nothing follows."""
    log = REAL / "vllm-33447-docker-apiserver-traceback-0.15.log"
    report = triage_files([log]).to_json()
    assert report["decided_by"]["rule"] == "serving_process_died"
    assert report["decided_by"]["process"]["process"] == "APIServer pid=1"
    assert report["decided_by"]["process"]["state"] == "dead"
    assert report["fatal"]["family"] == "process_died_raised"
    lines = explain(log)
    assert lines[1].startswith("rule:    serving_process_died (rule 2 of 12): ")
    assert lines[4] == "process: APIServer pid=1 (api_server; stack vllm; lines 1-17)"
    assert lines[6] == ("  dead: its last record is an uncaught exception (line 1) and nothing after it shows it alive")


def test_ready_with_autotune_failures_names_the_rule_and_the_banner():
    lines = explain(FIXTURES / "logs/sglang-ep8-0.6.3-ready-autotune-failures.log.gz")
    assert lines[0] == "verdict: READY_WITH_NONFATAL_AUTOTUNE_FAILURES (exit 10)"
    assert lines[1].startswith("rule:    ready_autotune_failures (rule 4 of 12): ")
    assert lines[3] == "why:     32 FlashInfer tactic failure(s) and 0 of other autotuners, all skipped: the server came up"
    assert lines[4].startswith("ready by: banner (first at ")
    assert lines[4].endswith(":1242: The server is fired up and ready to roll!; 1 line(s))")
    assert lines[5] == "not matched before it: death_reported, serving_process_died, ready_tactics_hidden"


def test_ready_from_behaviour_says_which():
    log = REAL / "sglang-22166-chat-completions-200-decode.log"
    lines = explain(log)
    assert lines[0] == "verdict: READY (exit 0)"
    assert lines[1] == "rule:    ready_request_served (rule 6 of 12): a request answered with 2xx"
    assert lines[2] == f'line:    {log}:10: INFO:     127.0.0.1:40254 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    assert lines[3] == "why:     the server answered 6 request(s) with 2xx"
    report = triage_files([log]).to_json()
    assert report["readiness"]["by"] == "request_served"
    assert report["readiness"]["seen"] == ["request_served", "traffic"]
    assert report["evidence"]["line"] == 2


def test_not_ready_names_the_last_line_and_every_live_process():
    log = REAL / "vllm-17756-vllmworker-rank-startup-info.log"
    lines = explain(log)
    assert lines[0] == "verdict: NOT_READY (exit 12)"
    assert lines[1].startswith("rule:    still_starting (rule 10 of 12): ")
    assert lines[2].startswith(f"line:    {log}:9: (VllmWorker rank=0 pid=403) INFO")
    workers = [line for line in lines if "(worker, alive)" in line]
    assert len(workers) == 5


def test_inconclusive_without_a_server_counts_the_other_autotuners():
    log = REAL / "heavyball-30-inductor-out-of-resource-warnings-numbered.log"
    lines = explain(log)
    assert lines[0] == "verdict: INCONCLUSIVE (exit 13)"
    assert lines[1] == "rule:    no_server (rule 11 of 12): known lines, none of a serving framework"
    assert lines[3] == "why:     lines the triage knows, but none of a serving framework; 4 autotune failure(s) of other tools"
    rows = triage_files([log]).to_json()["other_autotune_failures"]
    assert rows == [{"autotuner": "inductor", "count": 4, "limit_bytes": 166912,
                     "required_bytes": [196608, 262144, 294912], "tactics": [], "tiles": [],
                     "first_location": f"{log}:4", "last_location": f"{log}:7"}]


def test_catch_all_on_a_log_nobody_knows(tmp_path):
    log = tmp_path / "notes.log"
    log.write_text("lunch at noon\nbring the cables\n")
    lines = explain(log)
    assert lines[:3] == ["verdict: INCONCLUSIVE (exit 13)",
                         "rule:    catch_all (rule 12 of 12): nothing the table knows", "line:    -"]
    assert lines[3] == "why:     no rule knows any of the 2 line(s)"


def test_the_rule_table_is_one_ordered_table_ending_in_the_catch_all():
    assert [r.name for r in RULES] == [
        "death_reported", "serving_process_died", "ready_tactics_hidden", "ready_autotune_failures", "ready_banner",
        "ready_request_served", "ready_traffic", "ready_routes", "unclaimed_stack", "still_starting", "no_server", "catch_all"]


def test_the_invoke_task_prints_the_chain_and_exits_with_the_verdicts_code():
    log = REAL / "sglang-12567-tp7-dies-after-serving.log"
    done = subprocess.run([sys.executable, "-m", "invoke", "triage", "--explain", str(log)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 11, done.stderr
    assert done.stdout.splitlines()[1].startswith("rule:    death_reported (rule 1 of 12): ")
