"""The process model: who wrote a line, whether its last record is an exception, and what shows it alive."""

from reprokit.triage.parser import parse_lines
from reprokit.triage.processes import ProcessTracker, role_of


def processes(lines: list[str]) -> dict:
    _, stats = parse_lines(lines)
    return stats.processes.processes


def test_a_worker_that_logs_its_exception_at_error_and_says_nothing_more_is_dead():
    procs = processes([
        "(Worker_TP1 pid=7) INFO 06-10 03:43:31 [backends.py:35] Using InductorAdaptor",
        "(Worker_TP1 pid=7) ERROR 06-10 03:43:33 [multiproc_executor.py:487] WorkerProc failed to start.",
        "(Worker_TP1 pid=7) ERROR 06-10 03:43:33 [multiproc_executor.py:487] Traceback (most recent call last):",
        '(Worker_TP1 pid=7) ERROR 06-10 03:43:33 [multiproc_executor.py:487]   File "/x/vllm/v1/worker.py", line 4, in f',
        "(Worker_TP1 pid=7) ERROR 06-10 03:43:33 [multiproc_executor.py:487] RuntimeError: boom",
        "(Worker_TP0 pid=6) INFO 06-10 03:43:34 [gpu_worker.py:1] still loading",
    ])
    dead = procs["Worker_TP1 pid=7"]
    assert (dead.role, dead.dead, dead.serving) == ("worker", True, True)
    assert (dead.exception.line, dead.exception.how, dead.exception.exception) == (2, "logged", "RuntimeError: boom")
    assert dead.why() == ("dead: its last record is an exception logged at ERROR (line 2, ending 'RuntimeError: boom') "
                          "and nothing after it shows it alive")
    assert procs["Worker_TP0 pid=6"].dead is False


def test_a_later_info_line_of_the_same_process_shows_it_alive_but_teardown_does_not():
    lines = [
        "ERROR 04-10 01:50:06 [core.py:1] Traceback (most recent call last):",
        'ERROR 04-10 01:50:06 [core.py:1]   File "/x/vllm/v1/engine/core.py", line 9, in step',
        "ERROR 04-10 01:50:06 [core.py:1] ValueError: bad",
    ]
    assert processes([*lines, "INFO 04-10 01:50:07 [core.py:2] Engine shutdown complete"])["main"].dead is True
    alive = processes([*lines, "INFO 04-10 01:50:07 [metrics.py:2] Avg prompt throughput: 1.0 tokens/s, "
                               "Avg generation throughput: 2.0 tokens/s"])["main"]
    assert (alive.dead, alive.alive_line) == (False, 4)


def test_a_request_served_after_an_exception_shows_the_server_alive():
    procs = processes([
        "(EngineCore_DP0 pid=5) Traceback (most recent call last):",
        '(EngineCore_DP0 pid=5)   File "/x/vllm/v1/engine/core.py", line 9, in step',
        "(EngineCore_DP0 pid=5) KeyError: 3",
        'INFO:     127.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK',
    ])
    assert procs["EngineCore_DP0 pid=5"].alive_why == "a request served"
    assert procs["EngineCore_DP0 pid=5"].dead is False


def test_a_traceback_through_a_request_handler_is_a_failed_request_not_a_death():
    procs = processes([
        "ERROR 04-17 22:42:20 [serving_chat.py:200] Error in preprocessing prompt inputs",
        "ERROR 04-17 22:42:20 [serving_chat.py:200] Traceback (most recent call last):",
        'ERROR 04-17 22:42:20 [serving_chat.py:200]   File "/x/vllm/entrypoints/openai/serving_chat.py", line 1, in c',
    ])
    assert procs["main"].exception.request_handler is True
    assert procs["main"].dead is False


def test_faulthandler_frames_and_native_backtraces_are_crash_dumps():
    faulthandler = processes(['  File "/x/sglang/srt/managers/scheduler.py", line 519 in event_loop_overlap'])["main"]
    assert (faulthandler.exception.how, faulthandler.stack, faulthandler.dead) == ("crash_dump", {"sglang"}, True)
    native = processes(["(RayWorkerWrapper pid=9) /lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x7fdb899c4ac3]"])
    assert native["RayWorkerWrapper pid=9"].exception.how == "crash_dump"
    assert native["RayWorkerWrapper pid=9"].role == "worker"


def test_doubled_prefixes_and_ray_actors_name_the_innermost_process():
    procs = processes([
        "(EngineCore_DP1 pid=1) (Worker_DP1_TP1_EP3 pid=2) INFO 11-06 16:15:01 [layer.py:1] experts placed",
        "(pid=616, ip=192.168.149.159) INFO 11-06 16:15:01 [layer.py:1] hello",
    ])
    assert set(procs) == {"Worker_DP1_TP1_EP3 pid=2", "pid=616, ip=192.168.149.159"}
    assert role_of("pid=616, ip=192.168.149.159") == ("ray_actor", None)
    assert role_of("sglang TP3 EP3") == ("scheduler", "sglang")


def test_the_tracker_keeps_a_bounded_number_of_processes():
    tracker = ProcessTracker()
    for pid in range(1000):
        tracker.note(f"Worker_TP0 pid={pid}", pid + 1, "INFO", "hello")
    assert len(tracker.processes) == 256 and tracker.overflowed


def test_an_error_record_ending_in_a_wrapped_config_dump_is_no_sign_of_life():
    """vLLM's dump_input line after the exception, wrapped by the paste (llm-d/llm-d-kv-cache #49: its second line is
    the dump's own text from 'ing=True', as far as the thread's quote shows it): the bare line goes on with the ERROR
    record, and the engine that logged the exception stays dead."""
    procs = processes([
        "ERROR 07-09 11:28:31 [core.py:517] EngineCore encountered a fatal error.",
        "ERROR 07-09 11:28:31 [core.py:517] Traceback (most recent call last):",
        'ERROR 07-09 11:28:31 [core.py:517]   File "/x/vllm/v1/engine/core.py", line 508, in run_engine_core',
        "ERROR 07-09 11:28:31 [core.py:517] RuntimeError: boom",
        "ERROR 07-09 11:28:31 [dump_input.py:69] Dumping input data for V1 LLM engine (v0.1.dev7008+g2e3a182) with "
        "config: model='Qwen/Qwen3-0.6B', speculative_config=None, tokenizer='Qwen/Qwen3-0.6B', enable_prefix_cach",
        "ing=True, chunked_prefill_enabled=True, use_async_output_proc=True, pooler_config=None, compilation_config="
        '{"level":3,"debug_dump_path":"","cache_dir":"/home/.cache/vllm/torch_compile_cache/250b01e6ee","backend":""}',
    ])
    main = procs["main"]
    assert (main.dead, main.exception.exception, main.alive_line) == (True, "RuntimeError: boom", None)
