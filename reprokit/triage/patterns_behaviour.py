"""Patterns of what a server does rather than says, and of other autotuners' non-fatal failures.

Part of the one pattern table (``patterns.PATTERNS`` splices them in, in this order), each with a real
example line: readiness from behaviour (2xx answers, batches, engine stats, requests received, the HTTP routes set up) and the
choices Inductor ignores or the tactics TensorRT's builder skips.
"""

from __future__ import annotations

from reprokit.triage.table_types import LogPattern

BEHAVIOUR_PATTERNS: tuple[LogPattern, ...] = (
    LogPattern(
        "http_request", r"(INFO|WARNING|ERROR): +([^ ]+) - \"([A-Z]+) ([^ \"]+) HTTP/[0-9.]+\" ([0-9]+)",
        ("level", "client", "method", "path", "status"),
        '[2025-03-14 02:15:58] INFO:     10.25.28.11:47272 - "POST /generate HTTP/1.1" 200 OK',
        "uvicorn access log '%(client_addr)s - \"%(request_line)s\" %(status_code)s' (sglang #4407)",
        lead='INFO: +[^ ]+ - "', readiness="request_served",
    ),
    LogPattern(
        "sglang_batch", r"(Decode|Prefill) batch[.,] #", ("phase",),
        "[2026-04-08 14:05:21 TP0] Decode batch, #running-req: 5, #token: 20800, token usage: 0.29, cuda graph: True, "
        "gen throughput (token/s): 144.95, #queue-req: 0",
        "sglang srt/managers/scheduler_metrics_mixin.py log_decode_stats / log_prefill_stats (sglang #22331)",
        lead="Decode batch|Prefill batch", readiness="traffic",
    ),
    LogPattern(
        "vllm_engine_stats",
        r"(Engine [0-9]+: )?Avg prompt throughput: ([0-9.]+) tokens/s, Avg generation throughput: ([0-9.]+) tokens/s",
        (None, "prompt_tokens_per_s", "generation_tokens_per_s"),
        "INFO 02-15 22:10:03 metrics.py:455] Avg prompt throughput: 33.4 tokens/s, Avg generation throughput: 37.8 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%.",
        "vllm engine/metrics.py LoggingStatLogger (only a running engine logs its stats; vllm #13340)",
        lead="Avg prompt|Engine ", on_sglang_lines=False, readiness="traffic",
    ),
    LogPattern(
        "vllm_request", r"(Received|Added) request ([^ :]+)", ("what", "request_id"),
        "INFO 02-15 22:09:59 engine.py:275] Added request chatcmpl-803293759b1e415caefd7845b3fa8352.",
        "vllm entrypoints/logger.py RequestLogger, engine add_request (vllm #13340)",
        lead="Received request|Added request", on_sglang_lines=False, readiness="traffic",
    ),
    LogPattern(
        "vllm_http_routes", r"(Available routes are:|Route: ([^ ,]+), Methods: )", ("what", "path"),
        "(APIServer pid=1) INFO 09-10 19:12:30 [launcher.py:37] Route: /v1/chat/completions, Methods: POST",
        "vllm entrypoints/launcher.py serve_http: the route listing, logged once the engine is up, as the HTTP "
        "server starts (vllm #24578)", lead="Available routes|Route: ", on_sglang_lines=False, readiness="routes",
    ),
)

OTHER_AUTOTUNER_PATTERNS: tuple[LogPattern, ...] = (
    LogPattern(
        "inductor_choice_out_of_resources",
        r"select_algorithm[.:].*out of resource: ([^,]*),? Required: ([0-9]+),? Hardware limit: ?([0-9]+)",
        ("resource", "required_bytes", "limit_bytes"),
        "E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] No valid triton configs. "
        "OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block "
        "sizes or `num_stages` may help.. ",
        "torch/_inductor/select_algorithm.py: a Triton choice that does not fit is ignored (openpi #654)",
        family="error", severity="autotune", autotuner="inductor",
    ),
    LogPattern(
        "tensorrt_skipping_tactic",
        r"Skipping tactic ([0-9]+) due to insuff?icient memory on requested size of ([0-9]+) detected for tactic "
        r"(0x[0-9a-fA-F]+|[0-9]+)",
        ("tactic", "requested", "for_tactic"),
        "[10/18/2023-20:27:00] [TRT] [W] Skipping tactic 3 due to insuficient memory on requested size of 449 "
        "detected for tactic 4.",
        "TensorRT builder: a tactic that needs more memory than the pool is skipped (ultralytics/yolov5 #12248)",
        family="error", severity="autotune", autotuner="tensorrt",
    ),
)
