"""``static-smem``: the shared memory of FlashInfer's CUTLASS MoE kernels, computed with nvcc and no GPU.

Its headline is each failing kernel's bytes against the limit. The overflow that breaks SM120 is 1 KiB on
100 KiB, a sliver on a chart drawn from zero; here every kernel is drawn against the limit instead: a bar is its
distance from the limit (over to the right, under to the left), and the scale spans only the kernels nearest
the limit, so 1024 B is wide. Markdown gets the same chart in text, readable in a CI job summary.
"""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Output, Part, PinParam, Result, StepInput, StepKind


class KernelMembers(Part):
    """The compiled kernel's SharedStorage member by member (``invoke report --upstream`` itemises it)."""

    kernel_tensors_bytes: int | None = None
    kernel_pipelines_bytes: int | None = None
    kernel_scheduler_response_bytes: int | None = None
    kernel_tensormaps_bytes: int | None = None
    kernel_smem_alignment: int | None = None


class SmemRow(Part):
    """One tactic's kernel for one output type: its SharedStorage bytes and the builder's stage arithmetic."""

    op: str | None = None
    tactic: int | None = None
    tile: str | None = None
    tile_enum: str | None = None
    fusion: str | None = None
    swap_ab: bool | None = None
    output_dtype: str | None = None
    stages: int | None = None
    mainloop_smem_bytes: int | None = None
    epilogue_smem_bytes: int | None = None
    kernel_smem_bytes: int | None = None  # sizeof(SharedStorage): the dynamic shared memory the launch asks for
    static_smem_bytes: int | None = None  # the kernel's static __shared__ (0 for CUTLASS's kernels)
    total_smem_bytes: int | None = None  # the two together: what the fit check compares (facts/smem_fit.py)
    verdict: str | None = None  # fits, exceeds or unsupported, against capacity_bytes
    verdict_optin: str | None = None  # the same against optin_limit_bytes
    explanation: str | None = None
    kernel: KernelMembers | None = None


class Wheel(Part):
    file: str | None = None
    sha256: str | None = None


class Cutlass(Part):
    version: str | None = None


class HeadersCompiled(Part):
    count: int | None = None
    sha256: str | None = None


class Sources(Part):
    """What the numbers were compiled from."""

    wheel: Wheel | None = None
    flashinfer_git_commit: str | None = None
    cutlass: Cutlass | None = None
    headers_compiled: HeadersCompiled | None = None
    nvcc_versions: list[str] | None = None
    nvcc_flags: list[str] | None = None
    static_smem_limits: dict[str, int] | None = None  # per compile target: the compiler's static __shared__ limit


class StaticSmemResult(Result):
    flashinfer: str | None = None
    arch: str | None = None
    dtype: str | None = None
    output_dtypes: list[str] | None = None
    capacity_bytes: int | None = None
    capacity_symbol: str | None = None
    optin_limit_bytes: int | None = None
    optin_source: str | None = None
    failing_tiles: list[str] | None = None
    fitting_tiles: list[str] | None = None
    unsupported_tiles: list[str] | None = None
    failing_tactics: dict[str, Any] | None = None
    failing_tactics_optin: dict[str, Any] | None = None
    tactic_counts: dict[str, Any] | None = None
    tactic_indexing: dict[str, Any] | None = None
    candidates: dict[str, Any] | None = None
    rows: list[SmemRow] | None = None
    sources: Sources | None = None
    notes: list[str] | None = None
    cache: dict[str, Any] | None = None
    elapsed_s: float | None = None
    artifacts: dict[str, Any] | None = None


KIND = StepKind(
    name="static-smem",
    where="host",
    order=20,
    module="reprokit.workloads.static_smem",
    summary="shared memory of FlashInfer's SM120 CUTLASS MoE kernels, computed with nvcc and no GPU",
    needs_pins=("flashinfer-python",),
    implemented=True,
    default_timeout_s=900,
    param_keys=("arch", "flashinfer", "variants", "dtype", "output_dtypes", "jobs", "optin_limit_bytes"),
    inputs=(StepInput("wheel", "the pinned flashinfer-python wheel", from_control="flashinfer-wheel"),),
    pin_params=(PinParam("flashinfer", pin="flashinfer-python"),),
    host_arch_param="arch",
    outputs=(Output("result.json", "the verdict of every tactic's kernel against the capacity, with the builder's"
                    " stage arithmetic (what tile-sweep cross-checks)"),),
    optin_limit_param="optin_limit_bytes",
    result=StaticSmemResult,
)
