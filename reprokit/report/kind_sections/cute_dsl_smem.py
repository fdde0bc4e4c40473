"""The cute-dsl-smem kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/cute_dsl_smem.py``)."""

from __future__ import annotations

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.cute_dsl_smem import (
    KIND,  # noqa: F401 - the kind these sections draw
    CuteDslSmemResult,
)


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    result: CuteDslSmemResult = step.result
    if not result.by_case:
        return None
    title = f"Shared memory of {result.kernel} ({result.package} {result.version}; step {step.name})"
    rows, first_overflow = [], None
    for case in result.cases or []:
        for arch, size in result.by_case.get(case.name, {}).items():
            stages = ", ".join(f"{k} {v}" for k, v in (size.stages or {}).items())
            rows.append([case.name, case.model or "-", arch, stages, size.shared_bytes, size.limit_bytes,
                         "fits" if size.fits else "OVERFLOWS"])
            if not size.fits and first_overflow is None:
                first_overflow = (case.name, arch, size)
    out: list[Block] = [f"{result.source}: upstream's stage formula and `@cute.struct` storage, run on shapes.",
                        (["case", "model", "arch", "stages", "bytes", "limit", "fit"], rows)]
    if first_overflow:
        name, arch, size = first_overflow
        out += [f"{size.struct} of case {name} on {arch}, field by field:",
                (["field", "offset", "bytes"], [[f.name, f.offset, f.bytes] for f in size.fields or []])]
    return title, out


markdown, html = drawn_blocks(blocks)


SECTIONS = (Section("findings", markdown=markdown, html=html, each_step=True),)
