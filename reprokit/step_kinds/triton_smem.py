"""``triton-smem``: the shared memory of a ``@triton.jit`` kernel of a pinned wheel, compiled for each arch as its
launch specialises it (no GPU of that arch needed). Its section: one row per case, one column per arch.
"""

from __future__ import annotations

from typing import Any

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.step_kinds.base import Part, PinParam, ReportStep, Result, Section, StepInput, StepKind, given


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
    triton: str | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    cases: list[Case] | None = None
    by_case: dict[str, dict[str, ArchSize]] | None = None  # case name -> arch -> its size
    overflowing: dict[str, Any] | None = None


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    """The section of one step: a title, then paragraphs and tables; none for a result without cases."""
    result: TritonSmemResult = step.result
    if not result.by_case:
        return None
    archs, limits = result.archs or [], result.limits_bytes or {}
    title = (f"Shared memory of {result.kernel} ({result.package} {result.version},"
             f" Triton {result.triton}; step {step.name})")
    rows = []
    for case in result.cases or []:
        cells = []
        for arch in archs:
            size = result.by_case[case.name][arch]
            cells.append(f"{size.shared_bytes} ({'fits' if size.fits else 'OVERFLOWS'})" if size.fits is not None
                         else f"compile failed: {size.error}")
        rows.append([case.name, given(case.num_warps, "-"), given(case.num_stages, "-"), *cells])
    return title, [f"{result.source}; limits: " + ", ".join(f"{a} {limits[a]} B" for a in archs) + ".",
                   (["case", "warps", "stages", *archs], rows)]


markdown, html = drawn_blocks(blocks)


KIND = StepKind(
    name="triton-smem",
    where="host",
    order=50,
    module="reprokit.workloads.triton_smem",
    summary="shared memory of a @triton.jit kernel of a pinned wheel, compiled for each arch as its launch"
            " specialises it (no GPU of that arch needed)",
    implemented=True,
    default_timeout_s=900,
    param_keys=("package", "version", "source", "kernel", "archs", "args", "cases", "jobs"),
    inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=TritonSmemResult,
    sections=(Section("findings", markdown=markdown, html=html, each_step=True),),
)
