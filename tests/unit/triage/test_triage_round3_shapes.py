"""The log shapes of the corpus's third round, each on its real excerpt (tuning half): exact verdicts, rules and lines."""

from pathlib import Path

from reprokit.triage import render_explain, triage_files
from reprokit.triage.parser import parse_lines

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def report(name: str) -> dict:
    return triage_files([REAL / f"{name}.log"]).to_json()


def test_a_ray_glog_line_at_a_lines_start_is_read():
    """'[2024-06-13 16:11:51,588 E ...] core_worker.cc:228:' is Ray's logger, not sglang's prefix: the fast scan reads it."""
    got = report("vllm-5495-ray-core-worker-register-failed")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "death_reported", 2)
    assert got["fatal"]["family"] == "ray_worker_failed"
    _, stats = parse_lines(["[2024-06-13 16:11:51,588 E 13261 13261] core_worker.cc:228: Failed to register worker "
                            "01000000ffff to Raylet. IOError: [RayletClient] Unable to register worker with raylet."])
    assert +stats.lines_by_format == {"ray_glog": 1}


def test_a_tensorrt_llm_executor_that_fails_to_start_is_a_dead_process():
    """'[E] Failed to initialize executor on rank 0' and its C++ frames: the executor's last record is that error."""
    got = report("trtllm-5389-failed-to-initialize-executor-gemm")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "serving_process_died", 2)
    assert got["fatal"]["family"] == "process_died_logged"
    lines = render_explain(triage_files([REAL / "trtllm-5389-failed-to-initialize-executor-gemm.log"])).splitlines()
    assert lines[4] == "process: main (main; stack tensorrt_llm; lines 1-6)"
    assert lines[6] == ("  dead: its last record is an exception logged at ERROR (line 2) and nothing after it shows "
                        "it alive")


def test_a_crash_dump_is_cited_at_the_frame_that_says_why():
    assert report("vllm-5785-ray-worker-terminate-handler")["evidence"]["line"] == 2  # ray::TerminateHandler()
    assert report("vllm-13535-ray-worker-nccl-watchdog-backtrace")["evidence"]["line"] == 2  # ncclCommWatchdog()


def test_a_signal_reprinted_by_rays_logger_is_cited_once_at_its_first_line():
    got = report("vllm-3053-sigsegv-fatal-python-error")
    assert (got["verdict"], got["evidence"]["line"], got["fatal"]["family"]) == ("FATAL", 1, "signal")


def test_a_k9s_pane_and_docker_desktops_timestamps_are_stripped():
    got = report("gateway-api-inference-extension-550-k9s-pane-vllm-startup")
    assert (got["verdict"], got["decided_by"]["rule"], got["phase"]) == ("NOT_READY", "still_starting", "starting")
    _, stats = parse_lines((REAL / "gateway-api-inference-extension-550-k9s-pane-vllm-startup.log").read_text().splitlines())
    assert stats.lines_by_format == {"vllm": 5}
    got = report("vllm-6697-docker-desktop-triton-vllm-backend-started")
    assert (got["verdict"], got["decided_by"]["rule"], got["readiness"]["by"]) == ("READY", "ready_banner", "banner")
    assert got["evidence"]["line"] == 2  # "Started HTTPService at 0.0.0.0:8000"


def test_ansi_colours_in_caret_notation_are_removed():
    got = report("flagtree-352-worker-tp0-caret-ansi-triton-launch")
    assert (got["verdict"], got["decided_by"]["rule"]) == ("FATAL", "serving_process_died")
    assert got["decided_by"]["process"]["process"] == "Worker_TP0 pid=46727"


def test_a_callers_actor_died_error_is_a_death_notice():
    got = report("verl-4921-ray-actor-died-vllm-rollout-server")
    assert (got["verdict"], got["decided_by"]["rule"], got["fatal"]["family"]) == ("FATAL", "death_reported",
                                                                                  "ray_actor_died")


def test_a_weight_loading_bar_under_a_wrapper_is_a_server_starting():
    got = report("olmocr-129-sglang-wrapper-waiting-shards")
    assert (got["verdict"], got["decided_by"]["rule"], got["phase"]) == ("NOT_READY", "still_starting", "loading_weights")
