"""The cutlass-tile-list kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/cutlass_tile_list.py``)."""

from __future__ import annotations

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.base import given
from reprokit.step_kinds.cutlass_tile_list import (
    KIND,  # noqa: F401 - the kind these sections draw
    TileListResult,
)


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    result: TileListResult = step.result
    if not result.by_arch:
        return None
    rule = result.fixed_stages
    out: list[Block] = [f"{result.source}: {len(result.tiles or [])} candidate tiles; "
                        + (f"stages fixed at {rule['stages']} when {rule['condition']} ({result.launcher})" if rule
                           else "every tile's stages sized by CUTLASS from the capacity") + "."]
    for arch, rows in result.by_arch.items():
        out.append(([f"tile ({arch})", "tactics", "stages", "bytes per stage", "mainloop bytes", "kernel bytes", "limit", "fit"],
                    [[r.tile, ", ".join(map(str, r.tactics)), r.stages, r.stage_bytes, given(r.mainloop_bytes, "-"),
                      given(r.kernel_bytes, "-"), r.limit_bytes, "-" if r.overflows is None else ("OVERFLOWS" if r.overflows else "fits")]
                     for r in rows]))
    return f"CUTLASS tile candidates ({result.package} {result.version}; step {step.name})", out


markdown, html = drawn_blocks(blocks)


SECTIONS = (Section("findings", markdown=markdown, html=html, each_step=True),)
