"""Verdicts, their exit codes, and the public API's contract."""

import re
from pathlib import Path

import pytest
from triage_logs import flashinfer, lines_bytes, sglang, skip_record

from reprokit.errors import ConfigError, ExitCode
from reprokit.triage import EXIT_CODES, LogVerdict, triage_files

DOCS = Path(__file__).resolve().parents[3] / "docs" / "triage.md"
READY = sglang("The server is fired up and ready to roll!", ts="2026-02-19 10:07:49")
AUTOTUNE_RAN = [sglang("Running FlashInfer autotune...", "TP0"), sglang("FlashInfer autotune completed.", "TP0")]


def triage(tmp_path, lines, **kwargs):
    path = tmp_path / "server.log"
    path.write_bytes(lines if isinstance(lines, bytes) else lines_bytes(lines))
    return triage_files([path], **kwargs).to_json()


def test_exit_codes_are_distinct_and_clear_of_the_generic_ones():
    codes = list(EXIT_CODES.values())
    assert len(set(codes)) == len(LogVerdict) == 5
    assert EXIT_CODES[LogVerdict.READY] == 0
    assert not set(codes[1:]) & {int(code) for code in ExitCode}


def test_the_docs_table_lists_every_verdict_with_its_exit_code():
    rows = dict(re.findall(r"^\| `?([A-Z_]+)`? \| (\d+) \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE))
    assert rows == {verdict.value: str(code) for verdict, code in EXIT_CODES.items()}


def test_fatal_wins_over_readiness(tmp_path):
    sigquit = sglang("SIGQUIT received. signum=None, frame=None. It usually means one child failed.")
    report = triage(tmp_path, [READY, sigquit])
    assert (report["verdict"], report["exit_code"], report["ready"]) == ("FATAL", 11, True)
    assert report["fatal"]["kind"] == "sigquit_received"


def test_a_bare_traceback_with_a_sticky_cuda_error_is_fatal_but_a_logged_oom_is_not(tmp_path):
    crash = ["Traceback (most recent call last):", '  File "x.py", line 3, in forward',
             "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"]
    assert triage(tmp_path, [READY] + crash)["fatal"]["cause"] == "cuda_illegal_memory_access"
    handled = [sglang("ERROR:    Exception in ASGI application"),
               "Traceback (most recent call last):", '  File "x.py", line 3, in generate',
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has 1 GiB free."]
    report = triage(tmp_path, [READY] + handled)
    assert (report["verdict"], report["fatal"]) == ("READY", None)
    assert [(e["kind"], e["count"], e["message"]) for e in report["errors"]] == [
        ("python_traceback", 1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                                "GPU 0 has 1 GiB free.")]


def test_an_nccl_watchdog_timeout_is_fatal(tmp_path):
    line = ("[rank3]:[E0219 10:30:00.123456789 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 "
            "milliseconds before timing out.")
    report = triage(tmp_path, [READY, line])
    assert (report["verdict"], report["fatal"]["kind"], report["fatal"]["rank"]) == (
        "FATAL", "nccl_watchdog_timeout", "rank3")


def test_autotune_failures_inside_a_skip_record_are_not_fatal(tmp_path):
    record = skip_record(7)
    record[0] = record[0].replace("Assertion failed: Failed to initialize",
                                  "CUDA error: an illegal instruction was encountered;")
    report = triage(tmp_path, record + [READY])
    assert (report["verdict"], report["fatal"]) == ("READY_WITH_NONFATAL_AUTOTUNE_FAILURES", None)


def test_autotune_without_any_flashinfer_line_is_inconclusive(tmp_path):
    report = triage(tmp_path, AUTOTUNE_RAN + [READY])
    assert (report["verdict"], report["exit_code"]) == ("INCONCLUSIVE", 13)
    assert report["env"] == {"FLASHINFER_LOGGING_LEVEL": "debug"}
    old = triage(tmp_path, AUTOTUNE_RAN + [READY], flashinfer_version="0.6.3")
    assert "FlashInfer 0.6.3 logs each failed tactic at WARNING" in old["hint"]


def test_autotune_with_flashinfer_info_lines_and_no_failure_is_ready(tmp_path):
    started = flashinfer("[Autotuner]: Autotuning process starts ...", "INFO")
    ended = flashinfer("[Autotuner]: Autotuning process ends", "INFO")
    report = triage(tmp_path, AUTOTUNE_RAN[:1] + [started, ended] + AUTOTUNE_RAN[1:] + [READY])
    assert (report["verdict"], report["exit_code"], report["flashinfer"]["logger_levels"]) == ("READY", 0, {"INFO": 2})


def test_neither_ready_nor_fatal_is_not_ready_and_garbage_is_inconclusive(tmp_path):
    assert triage(tmp_path, AUTOTUNE_RAN)["verdict"] == "NOT_READY"
    garbage = triage(tmp_path, b"\x00\xff\xfe random bytes\nmore\x80\n")
    assert (garbage["verdict"], garbage["exit_code"], garbage["counts"]["unknown_lines"]) == ("INCONCLUSIVE", 13, 2)
    assert triage(tmp_path, b"")["verdict"] == "INCONCLUSIVE"


def test_vllm_is_ready_when_its_api_server_has_started(tmp_path):
    assert triage(tmp_path, ["(APIServer pid=3999) INFO:     Application startup complete."])["verdict"] == "READY"
    # in an sglang log uvicorn starts before warmup: that is not readiness
    assert triage(tmp_path, [sglang("INFO:     Application startup complete.")])["verdict"] == "NOT_READY"


def test_json_has_the_keys_the_kit_and_tasks_read(tmp_path):
    report = triage(tmp_path, skip_record(2) + [READY])
    assert {"verdict", "exit_code", "autotune_failure_tiles", "autotune_failures", "fatal", "ready", "counts",
            "timeline"} <= set(report)
    assert {"lines", "unknown_lines", "events"} <= set(report["counts"])
    assert report["autotune_failure_tiles"] == ["128x256x128"]


@pytest.mark.parametrize("paths, message", [
    ([], "no log file given"),
    ([Path("/nonexistent/server.log")], "/nonexistent/server.log: no such file"),
])
def test_bad_input_is_a_one_line_config_error(paths, message):
    with pytest.raises(ConfigError, match=message) as raised:
        triage_files(paths)
    assert "\n" not in str(raised.value)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        triage_files([tmp_path])
