"""``tilelang-smem``: the dynamic shared memory of a TileLang kernel of a pinned wheel, lowered for each arch.

A TileLang kernel's shared memory is decided by TileLang's lowering (its buffers merged into one dynamic
allocation), not by the kernel's text; the workload runs the lowering itself for a named CUDA target, which needs
no GPU, and reads the ``dyn_shared_memory_buf`` the launch will ask ``cudaFuncSetAttribute`` for.
"""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Part, PinParam, Result, StepInput, StepKind


class TileLangCase(Part):
    name: str
    why: str | None = None


class LoweredSize(Part):
    """One case lowered for one arch: the dynamic shared memory its launch requests, or why it did not lower."""

    dynamic_bytes: int | None = None
    static_bytes: int | None = None  # the static __shared__ arrays of its CUDA source; fits counts both
    limit_bytes: int | None = None
    fits: bool | None = None
    target: str | None = None
    error: str | None = None


class TileLangSmemResult(Result):
    package: str | None = None
    version: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    package_root: str | None = None
    source: str | None = None
    kernel: str | None = None
    tilelang: str | None = None
    torch: str | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    cases: list[TileLangCase] | None = None
    by_case: dict[str, dict[str, LoweredSize]] | None = None  # case name -> arch -> its size
    overflowing: dict[str, Any] | None = None


KIND = StepKind(
    name="tilelang-smem",
    where="host",
    order=52,
    module="reprokit.workloads.tilelang_smem",
    summary="dynamic shared memory of a TileLang kernel of a pinned wheel, lowered by TileLang for each arch"
            " (no GPU needed)",
    implemented=True,
    default_timeout_s=900,
    param_keys=("package", "version", "package_root", "source", "kernel", "archs", "args", "cases"),
    inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=TileLangSmemResult,
)
