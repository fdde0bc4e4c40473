"""sglang's Triton fused-MoE configurations against an architecture's shared memory (workload).

Reads the pinned sglang wheel's own defaults and shipped tuned files (``configs``), predicts each
configuration's shared memory per architecture (``predict``), compiles sglang's own ``fused_moe_kernel``
with each one as its launch specialises it (``reprokit.workloads.triton_smem``, when Triton is installed),
judges against the opt-in limit, and writes the configurations that fit SM120 as tuned files of
sglang's own name and format. ``python -m reprokit.workloads.triton_moe_configs --params P.json --out-dir DIR``.
"""
