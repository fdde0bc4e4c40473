"""The upstream error messages that both the sweep (an exception it caught) and the triage (a server's log) read.

Each is a regex in the subset shared by Python ``re`` and ``grep -E`` (no ``\\d``, no ``(?:``; the triage's
benchmark compares itself with ``grep -cE`` on the same text), with one field name per capture group (None for a
group that only groups) and a real line as its example. The sources are FlashInfer's vendored TensorRT-LLM
launcher and dispatcher, CUTLASS, Triton and the CUDA runtime (``../shared/reference/UPSTREAM.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

CUTLASS_STATUS_PATTERN = r"(Error [A-Za-z ]*[A-Za-z]|Success)"  # cutlass::cutlassGetStatusString, e.g. 'Error Internal'


@dataclass(frozen=True)
class ErrorMessage:
    name: str
    regex: str
    fields: tuple[str | None, ...]
    example: str


MOE_GEMM_INIT_FAILED = ErrorMessage(
    "moe_gemm_init_failed", r"Failed to initialize cutlass TMA WS grouped gemm\. Error: " + CUTLASS_STATUS_PATTERN, ("status",),
    "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal"
    " (/workspace/flashinfer/csrc/nv_internal/tensorrt_llm/cutlass_instantiations/120/gemm_grouped/"
    "cutlass_kernel_file_gemm_grouped_sm120_M128_group0.generated.cu:60)")
MOE_GEMM_RUN_FAILED = ErrorMessage(
    "moe_gemm_run_failed", r"Failed to run cutlass TMA WS grouped gemm\. Error: " + CUTLASS_STATUS_PATTERN, ("status",),
    "[TensorRT-LLM][ERROR] Assertion failed: Failed to run cutlass TMA WS grouped gemm. Error: Error Internal "
    "(cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu:60)")
MOE_GEMM_WILL_FAIL = ErrorMessage(
    "moe_gemm_will_fail", r"Grouped GEMM kernel will fail for params\. Error: " + CUTLASS_STATUS_PATTERN, ("status",),
    "[TensorRT-LLM][ERROR] Assertion failed: Grouped GEMM kernel will fail for params. Error: Error Not Supported "
    "(cutlass_kernel_file_gemm_grouped_sm120_M256_group1.generated.cu:60)")
MOE_GEMM_WORKSPACE = ErrorMessage(
    "moe_gemm_workspace", r"Workspace is size ([0-9]+) but only ([0-9]+) were allocated",
    ("required_bytes", "allocated_bytes"),
    "[TensorRT-LLM][ERROR] Assertion failed: Workspace is size 4194304 but only 2097152 were allocated "
    "(cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu:60)")
# the code is the CutlassTileConfigSM<arch> enum's value, K in bytes: read it with tiles.parse_tile
MOE_UNSUPPORTED_TILE_CONFIG = ErrorMessage(
    "moe_unsupported_tile_config", r"Unsupported tile shape config ([0-9]+) for MoE gemm", ("config",),
    "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:512)")
MOE_UNSUPPORTED_TILE_CLUSTER = ErrorMessage(
    "moe_unsupported_tile_cluster",
    r"Unsupported tile \(([0-9]+), ([0-9]+), ([0-9]+)\) and cluster \(([0-9]+), ([0-9]+), ([0-9]+)\) "
    r"shape combination for arch ([0-9]+)",
    ("tile_m", "tile_n", "tile_k", "cluster_m", "cluster_n", "cluster_k", "arch"),
    "Unsupported tile (128, 256, 128) and cluster (2, 1, 1) shape combination for arch 120.")
MOE_UNSUPPORTED_CLUSTER_CONFIG = ErrorMessage(
    "moe_unsupported_cluster_config", r"Unsupported cluster shape config ([0-9]+) for MoE gemm", ("config",),
    "Unsupported cluster shape config 3 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:307)")
MOE_GEMM_CONFIG_UNDEFINED = ErrorMessage(
    "moe_gemm_config_undefined", r"GEMM config undefined\.", (),
    "GEMM config undefined. (moe_gemm_template_dispatch_tma_ws.h:512)")
# a dispatch frame of the backtrace: the arch, the activation type and the cute tile Shape<M, N, K>, in elements
MOE_DISPATCH_FRAME = ErrorMessage(
    "moe_dispatch_frame",
    r"dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized<cutlass::arch::Sm([0-9]+), ([^,]+), .*"
    r"\([A-Za-z_:]*EpilogueFusion\)([0-9]+), "
    r"cute::tuple<cute::C<([0-9]+)>, cute::C<([0-9]+)>, cute::C<([0-9]+)> ?>(, (true|false))? ?>",
    ("arch", "dtype", "fusion", "tile_m", "tile_n", "tile_k", None, "swap_ab"),
    "4       0x7f3a1c42a1c7 void tensorrt_llm::kernels::cutlass_kernels_oss::"
    "dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized<cutlass::arch::Sm120, __nv_fp4_e2m1, __nv_fp4_e2m1, "
    "__nv_bfloat16, tensorrt_llm::cutlass_extensions::EpilogueOpDefault, "
    "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion)0, "
    "cute::tuple<cute::C<128>, cute::C<256>, cute::C<128> >, false>"
    "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput, int, "
    "tensorrt_llm::cutlass_extensions::CutlassGemmConfig, int, CUstream_st*, int*, unsigned long*) + 689")
TRITON_OUT_OF_RESOURCES = ErrorMessage(
    "triton_out_of_resources",
    r"OutOfResources: out of resource: ([a-z ]+), Required: ([0-9]+), Hardware limit: ([0-9]+)",
    ("resource", "required_bytes", "limit_bytes"),
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.")

# CUDA errors after which the context is unusable: nothing later in the same process can be trusted. The runtime
# documents each of these as leaving "the process in an inconsistent state" (cudaErrorIllegalAddress 700,
# cudaErrorLaunchFailure 719, cudaErrorIllegalInstruction 715, cudaErrorMisalignedAddress 716): the sweep stops
# the backend, and the triage calls a server that printed one dead.
STICKY_CUDA_ERRORS = (
    "illegal memory access", "illegal instruction", "misaligned address", "unspecified launch failure",
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorIllegalAddress", "cudaErrorLaunchFailure",
)


def fields_of(message: ErrorMessage, groups: tuple[str | None, ...]) -> dict[str, str]:
    """The named fields of a match's groups (groups that did not take part are left out)."""
    return {name: value for name, value in zip(message.fields, groups) if name is not None and value is not None}
