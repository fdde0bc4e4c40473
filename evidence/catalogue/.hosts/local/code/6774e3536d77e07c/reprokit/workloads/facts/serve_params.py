"""The serving workloads' parameters and their defaults: what a kit may leave out, and the type of what it gives.

The workloads (``serve.py``, ``serve_vllm.py``) fill a step's parameters from these; the step kinds read them too,
so that a value of the wrong type (``--set serve.tp=abc``) is refused when the kit is read, not on the host.
"""

from __future__ import annotations

from typing import Any

SGLANG_DEFAULTS: dict[str, Any] = {
    "tp": 8,
    "ep": 8,
    "moe_runner_backend": "flashinfer_cutlass",
    "quantization": "modelopt_fp4",
    "mem_fraction_static": 0.75,
    "max_running_requests": 512,
    "load_format": None,
    "port": 30000,
    "ready_timeout_s": 3600,
    "env": {},
    "extra_args": [],
    "smoke_prompt": "The capital of France is",
    "bench": {"concurrencies": [1, 8, 32], "num_prompts_per_concurrency": 4, "input_len": 512, "output_len": 128,
              "timeout_s": 900},
    "telemetry_interval_s": 1.0,
}

VLLM_DEFAULTS: dict[str, Any] = {
    "tp": 8,
    "enable_expert_parallel": True,
    "moe_backend": "flashinfer_cutlass",
    "quantization": None,
    "gpu_memory_utilization": 0.9,
    "max_num_seqs": 512,
    "dtype": None,
    "max_model_len": None,
    "enforce_eager": False,
    "check_answers": True,
    "load_format": None,
    "port": 8000,
    "ready_timeout_s": 3600,
    "env": {},
    "extra_args": [],
    "smoke_prompt": "The capital of France is",
    "bench": {"concurrencies": [1, 8, 32], "num_prompts_per_concurrency": 4, "input_len": 512, "output_len": 128,
              "timeout_s": 900},
    "telemetry_interval_s": 1.0,
}
