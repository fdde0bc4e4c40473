"""``triton-smem``: the shared memory of a ``@triton.jit`` kernel of a pinned wheel, compiled for each arch as its
launch specialises it (no GPU of that arch needed). Its section: one row per case, one column per arch.
"""

from __future__ import annotations

from typing import Any

from reprokit.report.tables import Block, html_blocks, md_blocks
from reprokit.step_kinds.base import PinParam, ReportStep, Result, Section, StepInput, StepKind


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    """The section of one step: a title, then paragraphs and tables; none for a result without cases."""
    result = step.result
    if not result.get("by_case"):
        return None
    archs = result["archs"]
    title = (f"Shared memory of {result['kernel']} ({result['package']} {result['version']},"
             f" Triton {result['triton']}; step {step.name})")
    rows = []
    for case in result["cases"]:
        cells = []
        for arch in archs:
            row = result["by_case"][case["name"]][arch]
            cells.append(f"{row['shared_bytes']} ({'fits' if row['fits'] else 'OVERFLOWS'})" if row["fits"] is not None
                         else f"compile failed: {row['error']}")
        rows.append([case["name"], case.get("num_warps", "-"), case.get("num_stages", "-"), *cells])
    return title, [f"{result['source']}; limits: " + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs) + ".",
                   (["case", "warps", "stages", *archs], rows)]


def markdown(step: ReportStep) -> list[str]:
    section = blocks(step)
    return md_blocks(*section) if section else []


def html(step: ReportStep) -> list[str]:
    section = blocks(step)
    return html_blocks(*section) if section else []


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
    cases: list[dict[str, Any]] | None = None
    by_case: dict[str, Any] | None = None
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
    param_keys=("package", "version", "source", "kernel", "archs", "args", "cases", "jobs"),
    inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=TritonSmemResult,
    sections=(Section("findings", markdown=markdown, html=html, each_step=True),),
)
