"""The parser: records and their continuation lines, streams, ranks, times, line counts by format."""

from triage_logs import INIT_FAILURE, RUNNER, flashinfer, parse_bytes, sglang, skip_record

from reprokit.triage.parser import _time_key, parse_lines


def kinds(events):
    return [e.kind for e in events]


def test_a_skip_record_takes_its_backtrace_and_ends_at_the_next_prefixed_line():
    lines = skip_record(14) + [sglang("Cache flushed successfully!", "TP0 EP0"), "a stray line"]
    events, stats = parse_lines(lines)
    assert kinds(events) == ["autotune_skip"]
    skip = events[0]
    assert (skip.line_no, skip.continuation_lines, skip.level, skip.rank) == (1, 4, "WARNING", None)
    assert skip.fields["tactic"] == "14" and skip.fields["runner"] == RUNNER
    assert skip.text.startswith("[Autotuner]: Skipping tactic") and skip.text.endswith("[0x5606c2e8d0ba]")
    assert stats.lines_by_format == {"flashinfer": 1, "continuation": 4, "sglang": 1, "unknown": 1}


def test_a_skipped_sglang_line_ends_the_open_record():
    """The fast path never decodes a plain sglang line; its presence alone must close the record."""
    lines = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
             sglang("Cache flushed successfully!", "TP1"), "ValueError: not part of the traceback"]
    events, stats = parse_lines(lines)
    assert kinds(events) == ["python_traceback"]
    assert events[0].continuation_lines == 1
    assert stats.lines_by_format["unknown"] == 1


def test_vllm_workers_are_separate_streams_with_their_ranks():
    a, b = "(Worker_DP0_EP0 pid=11) ", "(Worker_DP1_EP1 pid=12) "
    record_a, record_b = skip_record(2), skip_record(3)
    lines = [a + record_a[0], b + record_b[0]]
    lines += [a + x for x in record_a[1:]] + [b + x for x in record_b[1:]]
    lines += [worker + "INFO 02-19 12:03:20 [kernel_warmup.py:370] done" for worker in (a, b)]
    events, stats = parse_lines(lines)
    by_tactic = {e.fields["tactic"]: e for e in events}
    assert set(by_tactic) == {"2", "3"}
    assert by_tactic["2"].rank == "DP0 EP0" and by_tactic["3"].rank == "DP1 EP1"
    assert by_tactic["2"].continuation_lines == by_tactic["3"].continuation_lines == 4
    assert "cute::C<128>, cute::C<256>" in by_tactic["3"].text
    assert stats.ranks == {"DP0 EP0", "DP1 EP1"}


def test_sglang_rank_prefixes_and_the_short_date_form():
    events, stats = parse_lines([
        sglang("Running FlashInfer autotune...", "DP1 TP3 EP3 ATTN_CP0 MOE_DP1"),
        "[02-19 11:00:40 TP2] FlashInfer autotune completed.",
        "[23:46:30] The server is fired up and ready to roll!",
    ])
    assert [(e.kind, e.rank, e.at, e.at_key) for e in events] == [
        ("server_autotune_start", "DP1 TP3 EP3 ATTN_CP0 MOE_DP1", "2026-02-19 10:05:12", "02-19 10:05:12.000"),
        ("server_autotune_completed", "TP2", "02-19 11:00:40", "02-19 11:00:40.000"),
        ("ready", None, "23:46:30", "00-00 23:46:30.000"),
    ]
    assert stats.ranks == {"DP1 TP3 EP3 ATTN_CP0 MOE_DP1", "TP2"}


def test_time_keys_order_all_formats_on_one_scale():
    assert _time_key("flashinfer", "2026-02-19 10:05:14,502") == "02-19 10:05:14.502"
    assert _time_key("torch_c10", "0219 10:30:00") == "02-19 10:30:00.000"
    assert _time_key("vllm", "02-19 12:03:10") == "02-19 12:03:10.000"
    assert _time_key("bare", None) is None


def test_scheduler_exception_collects_its_chained_traceback():
    lines = [
        sglang("Scheduler hit an exception: Traceback (most recent call last):", "TP5 EP5"),
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2891, in run_scheduler_process',
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered",
        sglang("Received sigquit from a child process. It usually means the child failed."),
    ]
    events, stats = parse_lines(lines)
    assert kinds(events) == ["process_exception", "sigquit_from_child"]
    assert events[0].continuation_lines == 7 and events[0].fields["process"] == "Scheduler"
    assert stats.lines_by_format == {"sglang": 2, "continuation": 7}


def test_progress_lines_give_the_op_of_the_following_skip():
    lines = ["[AutoTuner]: Tuning trtllm::fused_moe::gemm2:  50%|█████     | 3/6 [00:00<00:00, 25.6profile/s]",
             flashinfer(f"[Autotuner]: Skipping tactic {RUNNER} 21, due to failure while profiling: {INIT_FAILURE}")]
    events, _ = parse_lines(lines)
    assert kinds(events) == ["autotune_progress", "autotune_skip"]
    assert events[0].fields == {"op": "trtllm::fused_moe::gemm2", "percent": "50", "done": "3", "total": "6"}
    assert events[1].fields["op_hint"] == "trtllm::fused_moe::gemm2"


def test_line_numbers_count_every_line_across_regions():
    lines = [sglang(f"Cache flushed, #entries: {i}", "TP0") for i in range(5000)]
    lines[3210] = sglang("The server is fired up and ready to roll!")
    events, stats = parse_bytes(("\n".join(lines) + "\n").encode(), chunk_bytes=4096, max_line_bytes=4096)
    assert [(e.kind, e.line_no) for e in events] == [("ready", 3211)]
    assert stats.lines == stats.lines_by_format["sglang"] == 5000


def test_records_still_open_at_the_end_of_the_file_are_emitted_and_marked():
    events, _ = parse_bytes(("\n".join(skip_record(7)[:3]) + "\n9       0x7f3a1c4").encode())
    assert kinds(events) == ["autotune_skip"]
    assert events[0].ended_by_eof is True and events[0].continuation_lines == 3


def test_unknown_and_known_bare_lines():
    events, stats = parse_lines([
        "Using default Dynamo address: dynamo/Processor",
        "gpu-node-03:4711:4711 [3] NCCL INFO Bootstrap : Using eth0:10.1.0.13<0>",
        "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:63: FutureWarning: deprecated",
        "",
        "[TensorRT-LLM][INFO] Set logger level to INFO",
        "Killed",  # bash's report of a SIGKILLed child: the whole line, a death notice
    ])
    assert [(e.kind, e.line_no, e.severity) for e in events] == [("shell_killed", 6, "fatal")]
    assert stats.lines_by_format == {"unknown": 1, "nccl_debug": 1, "python_warning": 1, "blank": 1, "tensorrt_llm": 1,
                                     "event": 1}
