"""The line model on the shapes real terminals and log collectors produce (each from a corpus thread)."""

import pytest
from triage_logs import lines_bytes, parse_bytes, sglang

from reprokit.triage import formats, triage_files
from reprokit.triage.parser import parse_lines

READY = sglang("The server is fired up and ready to roll!")
WORKER_RECORD = "(Worker_TP2_EP2 pid=2709392) INFO 09-29 09:52:20 [custom_all_reduce.py:203] Registering 12784 cuda graph addresses"
BAR = "Capturing CUDA graphs (decode, FULL):  97%|█████████▎| 65/67 [00:15<00:00,  4.58it/s]"


def test_a_record_glued_after_a_tqdm_bar_is_a_record_of_its_own():
    """vllm #25848: the worker wrote its line while the bar was drawn, without a newline."""
    events, stats = parse_lines([BAR + WORKER_RECORD, "(Worker_TP3_EP3 pid=2709393) INFO 09-29 09:52:22 "
                                 "[gpu_model_runner.py:3468] Graph capturing finished in 38 secs, took 1.64 GiB"])
    assert [(e.kind, e.line_no, e.rank) for e in events] == [
        ("cuda_graph_capture_progress", 1, None), ("vllm_graph_capture_finished", 2, "TP3 EP3")]
    assert stats.ranks == {"TP2 EP2", "TP3 EP3"}
    assert (stats.lines, stats.records_after_progress_bar, sum(stats.lines_by_format.values())) == (2, 1, 2)


def test_an_sglang_record_glued_after_a_bar_keeps_its_rank_and_time():
    events, stats = parse_lines([
        "Capturing batches (bs=10 avail_mem=11.99 GB):   0%|          | 0/5 [00:00<?, ?it/s]"
        "[2026-06-08 07:21:05 TP1] Capture cuda graph end. Time elapsed: 1.00 s.",
    ])
    assert [(e.kind, e.at, e.rank) for e in events] == [
        ("cuda_graph_capture_progress", None, None), ("cuda_graph_capture_end", "2026-06-08 07:21:05", "TP1")]
    assert (stats.lines_by_format["progress"], stats.lines_by_format["sglang"]) == (1, 0)


def test_redraws_pasted_on_one_line_are_each_a_bar():
    redraws = "".join(f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  {p}%|██ | {i}/5 [00:00<00:00,  8.82it/s]"
                      for i, p in ((1, 20), (2, 40), (3, 60)))
    events, stats = parse_lines([redraws])
    assert [e.kind for e in events] == ["cuda_graph_capture_progress"] * 3
    assert (stats.lines, stats.records_after_progress_bar) == (1, 2)


def test_a_flashinfer_record_after_a_test_id_starts_mid_line():
    events, stats = parse_lines([
        "tests/moe/test_x.py::test_y[FP8-8] 2026-03-24 12:42:51,264 - INFO - autotuner.py:262 - flashinfer.jit: "
        "[Autotuner]: Autotuning process starts ..."])
    assert [(e.kind, e.level) for e in events] == [("autotune_process_start", "INFO")]
    assert (stats.records_mid_line, stats.unknown_lines, stats.flashinfer_levels["INFO"]) == (1, 1, 1)


@pytest.mark.parametrize("prefix", [
    "2026-03-11T17:57:32.372145579Z ",  # docker logs --timestamps
    "sglang_server  | ",  # docker compose
    "авг 18 14:15:04 llm python3[28059]: ",  # journald, Russian locale
    "2026-03-11T17:57:32.372145579Z sglang_server  | ",  # both, outermost first
], ids=["docker", "compose", "journald", "docker+compose"])
def test_wrappers_in_front_of_sglang_lines(prefix, tmp_path):
    path = tmp_path / "wrapped.log"
    path.write_bytes(lines_bytes([prefix + sglang("Load weight end. elapsed=1.00 s", "TP0"), prefix + READY]))
    report = triage_files([path]).to_json()
    assert (report["verdict"], report["evidence"]["line"], report["ranks"]) == ("READY", 2, ["TP0"])
    assert report["counts"]["lines_by_format"] == {"sglang_wrapped": 2}


def test_nested_prefixes_counter_rank_c10():
    """hiyouga/LlamaFactory #7396: a line counter, torch's rank prefix, c10's glog prefix (3-digit date)."""
    events, stats = parse_lines([
        "[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
        "for 600060 milliseconds before timing out."])
    assert [(e.kind, e.fmt, e.rank, e.at_key) for e in events] == [
        ("nccl_watchdog_timeout", "torch_c10", "rank0", "03-21 02:07:08.000")]
    assert stats.lines_by_format == {"torch_c10": 1}


def test_ansi_coloured_worker_prefixes_keep_their_rank():
    events, stats = parse_bytes(b"\x1b[36m(Worker_TP1 pid=7)\x1b[0m INFO 09-29 09:52:22 [x.py:1] Graph capturing "
                                b"finished in 2 secs, took 0.10 GiB\n")
    assert [(e.kind, e.rank) for e in events] == [("vllm_graph_capture_finished", "TP1")]


def test_interleaved_workers_keep_their_own_records():
    events, _ = parse_lines([
        "(Worker_TP0 pid=1) Process Worker_TP0:",
        "(Worker_TP1 pid=2) ERROR 09-29 09:52:22 [x.py:1] Engine step failed",  # not TP0's: TP0's is uncaught
        "(Worker_TP0 pid=1) Traceback (most recent call last):",
        "(Worker_TP1 pid=2) Process Worker_TP1:",
        '(Worker_TP0 pid=1)   File "x.py", line 3, in run',
        "(Worker_TP1 pid=2) Traceback (most recent call last):",
        "(Worker_TP0 pid=1) RuntimeError: CUDA error: an illegal memory access was encountered",
    ])
    tracebacks = [(e.rank, e.line_no, e.continuation_lines, e.severity) for e in events if e.kind == "python_traceback"]
    assert tracebacks == [("TP0", 3, 2, "fatal"), ("TP1", 6, 0, "fatal")]


def test_a_bare_traceback_is_uncaught_unless_a_logged_error_line_announces_it():
    uncaught, _ = parse_lines(["[11/21/2024-10:26:11] [TRT-LLM] [I] Executor shutdown.",
                               "Traceback (most recent call last):"])
    logged, _ = parse_lines([sglang("ERROR:    Exception in ASGI application"), "Traceback (most recent call last):"])
    assert [(e.kind, e.severity, e.fields.get("uncaught")) for e in uncaught if e.kind == "python_traceback"] == [
        ("python_traceback", "fatal", "true")]
    assert [(e.kind, e.severity) for e in logged] == [("python_traceback", "error")]


def test_tensorrt_llm_python_logger_lines_are_not_sglang_lines():
    events, stats = parse_lines([formats.LINE_FORMATS_BY_NAME["tensorrt_llm_python"].example,
                                 "[TP0] Scheduler hit an exception: Traceback (most recent call last):"])
    assert stats.lines_by_format == {"tensorrt_llm_python": 1, "sglang_untimed": 1}
    assert [(e.kind, e.rank) for e in events] == [("process_exception", "TP0")]


def test_a_partial_last_line_is_the_evidence_of_a_cut_log(tmp_path):
    path = tmp_path / "cut.log"
    path.write_bytes(lines_bytes([sglang("Load weight begin. avail mem=78.38 GB", "TP0")]) + b"[2026-02-19 10:05")
    report = triage_files([path]).to_json()
    assert (report["verdict"], report["phase"]) == ("NOT_READY", "loading_weights")
    assert report["evidence"] == {"location": f"{path}:2", "file": str(path), "line": 2, "text": "[2026-02-19 10:05"}
    assert report["files"][0]["ends_mid_line"] is True


def test_a_very_long_line_is_capped_and_still_read(tmp_path):
    path = tmp_path / "long.log"
    path.write_bytes(lines_bytes([READY + " " + "x" * (3 << 20), sglang("Decode batch, #running-req: 1")]))
    report = triage_files([path]).to_json()
    assert (report["verdict"], report["counts"]["truncated_lines"], report["counts"]["lines"]) == ("READY", 1, 2)


def test_current_phase_follows_a_live_log(tmp_path):
    from reprokit.triage import current_phase

    path = tmp_path / "live.log"
    steps = [
        (sglang("Load weight begin. avail mem=78.38 GB", "TP0"), "loading_weights"),
        (sglang("Running FlashInfer autotune...", "TP0"), "autotune"),
        (sglang("Capture cuda graph begin. This can take up to several minutes.", "TP0"), "cuda_graph_capture"),
        (sglang("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"), "http_server_up"),
        (READY, "ready"),
        (sglang("Scheduler hit an exception: Traceback (most recent call last):", "TP0"), "dead"),
    ]
    lines = []
    for line, phase in steps:
        lines.append(line)
        path.write_bytes(lines_bytes(lines))
        assert current_phase([path]) == phase


def test_a_log_with_no_framework_line_is_inconclusive(tmp_path):
    path = tmp_path / "other.log"
    path.write_bytes(lines_bytes(["Error: Failed to initialize the TMA descriptor 1", "make: *** [all] Error 2"]))
    report = triage_files([path]).to_json()
    assert (report["verdict"], report["evidence"], report["phase"]) == ("INCONCLUSIVE", None, None)
    assert [e["kind"] for e in report["errors"]] == ["cutlass_tma_descriptor"]
