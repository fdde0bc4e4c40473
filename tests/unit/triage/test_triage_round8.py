"""Round 8's classes on real logs: FlashInfer's OOM fallback, a tactic's backtrace at the end of a cut log, the
stacks claimed beside sglang and vLLM (TGI, Triton's model table)."""

from pathlib import Path

from reprokit.triage import triage_files

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
OOM = REAL / "club-3090-613-vllm-5090-autotune-oom-fallback-glued.log"
SKIP = REAL / "flashinfer-2077-vllm-pp0-sm120-skip-tactic.log"
# a vLLM API server's readiness line, verbatim from vllm-project/vllm #20559
VLLM_READY = "INFO 07-07 00:42:52 [api_server.py:1455] Starting vLLM API server 0 on http://0.0.0.0:8000"


def test_an_oom_fallback_is_a_nonfatal_autotune_failure_of_a_server_still_tuning():
    report = triage_files([OOM]).to_json()
    assert (report["verdict"], report["phase"], report["fatal"]) == ("NOT_READY", "autotune", None)
    oom = report["autotune_oom_fallbacks"]
    assert (oom["count"], oom["first"], oom["first_location"]) == (4, "2026-07-06 23:18:23,723", f"{OOM}:1")


def test_a_server_that_came_up_after_oom_fallbacks_is_ready_with_nonfatal_autotune_failures(tmp_path):
    """The real OOM excerpt, then a real vLLM readiness line (two real logs, joined)."""
    log = tmp_path / "server.log"
    log.write_text(OOM.read_text() + VLLM_READY + "\n")
    report = triage_files([log]).to_json()
    assert (report["verdict"], report["exit_code"]) == ("READY_WITH_NONFATAL_AUTOTUNE_FAILURES", 10)
    assert report["reason"] == ("server ready; 4 autotune tactic failure(s), skipped by the autotuner (tiles unknown); "
                                "4 of them out of memory, fallen back to the default tactic")


def test_a_skipped_tactic_whose_backtrace_lost_the_worker_prefix_is_one_record_of_a_live_process(tmp_path):
    """flashinfer #2077's skip record as a collector that prefixes a record's first line only writes it: the frames
    belong to the tactic's exception, not to a crash dump of the file's main process; the log is cut mid-warmup."""
    prefix = "(Worker_PP0 pid=38385) "
    first, *frames = SKIP.read_text().splitlines()
    log = tmp_path / "cut.log"
    log.write_text("\n".join([first, *(line.removeprefix(prefix) for line in frames)]) + "\n")
    report = triage_files([log]).to_json()
    assert (report["verdict"], report["phase"], report["fatal"]) == ("NOT_READY", "autotune", None)
    assert (report["decided_by"]["rule"], len(report["autotune_failures"])) == ("still_starting", 1)
    assert [p["state"] for p in report["processes"]] == ["alive"]
    assert report["evidence"]["line"] == 3


def test_triton_is_ready_by_its_model_table_and_tgi_by_its_router():
    triton = triage_files([REAL / "triton-server-6738-model-table-ready-rtx3060.log"]).to_json()
    assert (triton["verdict"], triton["readiness"]["by"], triton["evidence"]["line"]) == ("READY", "banner", 5)
    waiting = triage_files([REAL / "tgi-2139-sharded-mixtral-waiting-for-shards.log"]).to_json()
    assert (waiting["verdict"], waiting["phase"]) == ("NOT_READY", "loading_weights")
    failed = triage_files([REAL / "tgi-2828-shards-terminated-webserver-failed.log"]).to_json()
    assert (failed["verdict"], failed["fatal"]["family"], failed["evidence"]["line"]) == (
        "FATAL", "tgi_launcher_exit", 8)


def test_a_stack_the_triage_does_not_read_is_inconclusive_naming_it(tmp_path):
    """llama.cpp's server, verbatim from ggml-org/llama.cpp #18546: recognised, not read."""
    log = tmp_path / "llama-server.log"
    log.write_text("\n".join([
        "main: binding port with default address family",
        "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 11",
        "main: loading model",
        r"srv    load_model: loading model 'C:\Users\lavan\win-x64\External\Models\phi-3.5-mini-instruct.gguf'",
    ]) + "\n")
    report = triage_files([log]).to_json()
    assert (report["verdict"], report["exit_code"], report["decided_by"]["rule"]) == ("INCONCLUSIVE", 13, "unclaimed_stack")
    assert report["reason"] == ("llama.cpp's server's lines: this triage reads sglang, vLLM, TensorRT-LLM, Triton "
                                "Inference Server and TGI, not llama.cpp's server")


def test_a_log_cut_inside_a_traceback_cites_the_line_that_names_the_cause(tmp_path):
    """Real logs cut to start inside their tracebacks (at a File frame, at a caret): the cited line is the cause."""
    cases = {"sglang-3713-scheduler-illegal-memory-access.log": (2, "RuntimeError: CUDA error: an illegal memory access"),
             "vllm-27508-apiserver-engine-core-initialization-failed-py313-carets.log": (3, "RuntimeError: Engine core "
                                                                                           "initialization failed."),
             "sglang-8974-bare-traceback-nccl-unhandled.log": (2, "RuntimeError: NCCL error: unhandled system error")}
    for name, (start, cause) in cases.items():
        cut = tmp_path / name
        cut.write_text("\n".join((REAL / name).read_text().splitlines()[start - 1:]) + "\n")
        evidence = triage_files([cut]).to_json()["evidence"]
        assert evidence["text"].startswith(cause), name
