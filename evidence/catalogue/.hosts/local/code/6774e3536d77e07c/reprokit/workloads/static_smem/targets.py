"""What the analysis can target: architectures and MoE data types, defined once.

Only names and C++ spellings live here. Everything that changes across
FlashInfer versions (tile candidates, nvcc flags, the launcher itself) is read
from the pinned wheel by ``sources.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchTarget:
    name: str  # "sm120"
    sm: int  # the `sm` FlashInfer's runner is built for (getTactics(sm, ...))
    gencode: str  # the nvcc target FlashInfer's JIT uses for this arch
    jit_module: str  # the function of flashinfer/jit/fused_moe.py that builds the MoE module
    capacity_symbol: str  # CUTLASS's shared-memory capacity constant its builders size stages against


ARCHES: dict[str, ArchTarget] = {
    arch.name: arch
    for arch in (
        ArchTarget("sm120", 120, "-gencode=arch=compute_120a,code=sm_120a",
                   "gen_cutlass_fused_moe_sm120_module", "cutlass::arch::sm120_smem_capacity_bytes"),
        ArchTarget("sm121", 121, "-gencode=arch=compute_121a,code=sm_121a",
                   "gen_cutlass_fused_moe_sm120_module", "cutlass::arch::sm120_smem_capacity_bytes"),
        ArchTarget("sm100", 100, "-gencode=arch=compute_100a,code=sm_100a",
                   "gen_cutlass_fused_moe_sm100_module", "cutlass::arch::sm100_smem_capacity_bytes"),
        ArchTarget("sm90", 90, "-gencode=arch=compute_90a,code=sm_90a",
                   "gen_cutlass_fused_moe_sm90_module",
                   "cutlass::gemm::collective::detail::sm90_smem_capacity_bytes"),
    )
}


@dataclass(frozen=True)
class MoeDtype:
    """The activation/weight types of a MoE quantisation, as the launcher spells them."""

    name: str
    act_cpp: str
    weight_cpp: str
    act_bits: int  # the T of the dispatcher's K-bytes -> K-elements conversion
    act_token: str  # the token generate_kernels.py passes to INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM
    weight_token: str
    is_mx_fpx: bool
    scaling_type: str  # TmaWarpSpecializedGroupedGemmInput::FpXBlockScalingType the runner sets
    output_dtypes: tuple[str, ...]  # the output types the binding builds runners for (switch_output_type)


DTYPES: dict[str, MoeDtype] = {
    "nvfp4": MoeDtype("nvfp4", "__nv_fp4_e2m1", "__nv_fp4_e2m1", 4, "SafeFP4", "SafeFP4", False, "NVFP4", ("bf16", "f16")),
    # Hopper's grouped GEMMs (isValidHopperMOESpecialisation): FP8 with bf16/f16 output, and plain BF16.
    "fp8": MoeDtype("fp8", "__nv_fp8_e4m3", "__nv_fp8_e4m3", 8, "SafeFP8", "SafeFP8", False, "NONE", ("bf16", "f16")),
    "bf16": MoeDtype("bf16", "__nv_bfloat16", "__nv_bfloat16", 16, "SafeBF16", "SafeBF16", False, "NONE", ("bf16",)),
}

# Output types of the NVFP4 runners FlashInfer builds (switch_output_type in the binding).
OUTPUT_DTYPES: dict[str, str] = {"bf16": "__nv_bfloat16", "f16": "half"}

GEMM_OPS = {1: "trtllm::fused_moe::gemm1", 2: "trtllm::fused_moe::gemm2"}
