"""``triton-smem``: the shared memory of a ``@triton.jit`` kernel of a pinned wheel, compiled for each arch as its
launch specialises it (no GPU of that arch needed). Its section: one row per case, one column per arch.
"""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Part, PinParam, Result, StepInput, StepKind


class Case(Part):
    """One launch configuration of the kernel."""

    name: str
    num_warps: int | None = None
    num_stages: int | None = None


class ArchSize(Part):
    """The kernel of one case compiled for one arch: its shared memory, or why it did not compile."""

    shared_bytes: int | None = None
    fits: bool | None = None
    error: str | None = None


class TritonSmemResult(Result):
    package: str | None = None
    version: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    source: str | None = None
    kernel: str | None = None
    package_root: str | None = None  # the wheel's package the kernel was imported from, when not cut out of one file
    import_as: str | None = None
    torch: str | None = None  # what that import had: torch's version, or "stand-in"
    triton: str | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    cases: list[Case] | None = None
    by_case: dict[str, dict[str, ArchSize]] | None = None  # case name -> arch -> its size
    overflowing: dict[str, Any] | None = None


KIND = StepKind(
    name="triton-smem",
    where="host",
    order=50,
    module="reprokit.workloads.triton_smem",
    summary="shared memory of a @triton.jit kernel of a pinned wheel, compiled for each arch as its launch"
            " specialises it (no GPU of that arch needed)",
    implemented=True,
    default_timeout_s=900,
    param_keys=("package", "version", "source", "kernel", "archs", "args", "cases", "jobs", "package_root", "import_as"),
    inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=TritonSmemResult,
)
