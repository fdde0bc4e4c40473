"""Patterns of lines that report a death: a caller's or a parent's report, or a signal handler's last words.

Part of the one pattern table (``patterns.PATTERNS`` splices them in, in this order, among the errors), each with a
real example line. A line of these is a death whatever its writer logs next (``summary.DEATH_NOTICE_KINDS``): the
reporter lives on (a Ray caller, vLLM's executor or core client, an API server), the dying process does not.
"""

from __future__ import annotations

from reprokit.triage.table_types import LogPattern

DEATH_REPORT_PATTERNS: tuple[LogPattern, ...] = (
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
)
