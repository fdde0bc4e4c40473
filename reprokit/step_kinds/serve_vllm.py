"""``serve-vllm``: ``vllm serve`` launched with the kit's flags and environment, watched until ready, fatal or timeout;
smoke, checked answers and ``vllm bench serve`` through vLLM's OpenAI API. Its result has the sglang ``serve``
step's shape, so the same sections draw it (``reprokit/report/kind_sections/serve_vllm.py``) and the triage reads its
``server.log`` as it reads sglang's. ``invoke kits --check`` holds its flags and ``VLLM_*`` variables to the pinned
vLLM wheel (``reprokit/upstream/vllm_args.py``).
"""

from __future__ import annotations

from reprokit.step_kinds.base import HostPath, Output, StepKind
from reprokit.step_kinds.serve import ServeResult
from reprokit.workloads.facts.serve_params import VLLM_DEFAULTS

KIND = StepKind(
    name="serve-vllm",
    where="host",
    order=61,
    module="reprokit.workloads.serve_vllm",
    summary="vLLM server (`vllm serve`) launched with the kit's flags and environment, watched until ready, fatal or"
            " timeout; smoke, answers and `vllm bench serve` through its OpenAI API",
    needs_gpu=True,
    needs_pins=("vllm", "flashinfer-python", "torch"),
    implemented=True,
    default_timeout_s=3600,
    param_keys=(
        "model", "tp", "enable_expert_parallel", "moe_backend", "quantization", "gpu_memory_utilization",
        "max_num_seqs", "dtype", "max_model_len", "enforce_eager", "check_answers", "load_format", "env", "extra_args", "ready_timeout_s", "port", "bench", "smoke_prompt",
        "telemetry_interval_s", "vllm",
    ),
    host_paths=(HostPath("model", variable="models_dir"),),
    required_params=(("model", "a model path on the host, in its models_dir, or a hub id"),),
    param_defaults=tuple(VLLM_DEFAULTS.items()),
    outputs=(Output("result.json", "outcome, readiness, answers, benchmark rows, telemetry and performance"),
             Output("**/*.log", "the server's log (server.log), the benchmarks' (bench-c<N>.log), the answers"
                    " (answers.log)"),
             Output("**/*.log.gz", "a server log the host compressed"),
             Output("bench-c*.json", "vllm bench serve's saved results, one per concurrency")),
    result=ServeResult,
)
