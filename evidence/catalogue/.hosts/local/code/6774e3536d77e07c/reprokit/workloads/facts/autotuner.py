"""FlashInfer's autotuner, as its DEBUG log tells which tactics it profiled: read by the workloads that run it and
by the triage's rank model, defined once here.

``flashinfer/autotuner/autotuner.py`` (0.6.18, ``_profile_single_kernel``) logs one line per profiled tactic and
token bucket, after the cross-rank all-reduce when a process group is set:
``[Autotuner]: profiling {runner} {tactic}, shapes={shapes}, avg_time {avg_time}``; ``choose_one`` logs
``[Autotuner]: Skipping tactic {runner} {tactic}, due to failure while profiling: {e}`` (DEBUG since 0.6.8).
The tactic is the runner's integer id (the fused MoE numbers gemm2's after gemm1's).
"""

from __future__ import annotations

import re

PROFILED_TACTIC = re.compile(r"\[Autotuner\]: profiling (.+?) (-?\d+), shapes=")
PROFILED_TACTIC_EXAMPLE = (
    "2026-12-06 03:18:41,877 - DEBUG - autotuner.py:2209 - flashinfer.jit: [Autotuner]: profiling "
    "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7fc95867d340> 1, "
    "shapes=((16, 1536), (256, 1024, 1536), (0,), (256, 1536, 512), (0,)), avg_time 1.02823677062")
SKIPPED_TACTIC = re.compile(r"\[Autotuner\]: Skipping tactic (.+?) (-?\d+), due to failure")
BLOCKLIST_FILTERED = re.compile(r"\[TacticsBlocklist\]: Filtered (\d+) invalid tactic\(s\) for (\S+) \((\d+) remaining\)")
BLOCKLIST_FILTERED_EXAMPLE = (
    "2026-12-02 10:26:07,810 - DEBUG - tactics_blocklist.py:141 - flashinfer.jit: [TacticsBlocklist]: Filtered 2 "
    "invalid tactic(s) for trtllm::fused_moe::gemm1::MoERunner (43 remaining)")
