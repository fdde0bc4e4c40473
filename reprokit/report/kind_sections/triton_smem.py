"""The triton-smem kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/triton_smem.py``)."""

from __future__ import annotations

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.base import given
from reprokit.step_kinds.triton_smem import (
    KIND,  # noqa: F401 - the kind these sections draw
    TritonSmemResult,
)


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
    imported = (f" (imported from the wheel's {result.package_root} as {result.import_as}, torch: {result.torch})"
                if result.package_root else "")
    return title, [f"{result.source}{imported}; limits: " + ", ".join(f"{a} {limits[a]} B" for a in archs) + ".",
                   (["case", "warps", "stages", *archs], rows)]


markdown, html = drawn_blocks(blocks)


SECTIONS = (Section("findings", markdown=markdown, html=html, each_step=True),)
