"""The tilelang-smem kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/tilelang_smem.py``)."""

from __future__ import annotations

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.tilelang_smem import (
    KIND,  # noqa: F401 - the kind these sections draw
    TileLangSmemResult,
)


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    """The section of one step: a title, then a table of dynamic plus static bytes per case and arch."""
    result: TileLangSmemResult = step.result
    if not result.by_case:
        return None
    archs, limits = result.archs or [], result.limits_bytes or {}
    title = (f"Shared memory of {result.kernel} ({result.package} {result.version},"
             f" TileLang {result.tilelang}; step {step.name})")
    rows = []
    for case in result.cases or []:
        cells = []
        for arch in archs:
            size = result.by_case[case.name][arch]
            if size.fits is None:
                cells.append(f"lowering failed: {size.error}")
            else:
                static = "?" if size.static_bytes is None else size.static_bytes
                cells.append(f"{size.dynamic_bytes} + {static} static ({'fits' if size.fits else 'OVERFLOWS'})")
        rows.append([case.name, *cells])
    targets = ", ".join(f"{a} ({result.by_case[next(iter(result.by_case))][a].target}) {limits[a]} B" for a in archs)
    return title, [f"{result.source}, lowered for {targets}: dynamic bytes (what the launch requests) plus the static"
                   " __shared__ arrays.", (["case", *archs], rows)]


markdown, html = drawn_blocks(blocks)


SECTIONS = (Section("findings", markdown=markdown, html=html, each_step=True),)
