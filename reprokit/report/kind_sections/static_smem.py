"""The static-smem kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/static_smem.py``)."""

from __future__ import annotations

import math

from markupsafe import Markup

from reprokit.draw.svg import Linear, Svg, is_number, nice_ticks
from reprokit.draw.tables import grouped_bytes, html_bytes, md_table
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.report.templating import render_part
from reprokit.step_kinds.base import given
from reprokit.step_kinds.static_smem import (
    KIND,  # noqa: F401 - the kind these sections draw
    SmemRow,
    StaticSmemResult,
)
from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.facts.exits import StepStatus

NEAREST_FITTING = 4  # fitting kernels shown next to the failing ones: the ones closest to the limit
TEXT_BAR_CHARS = 24

CAPACITY_ARCHES = ("sm90", "sm100", "sm120")  # the capacity lines drawn on the shared-memory chart


def smem_row_label(row: SmemRow) -> str:
    """``gemm2 #22 128x256x128 FINALIZE swap_ab bf16``: op, tactic, tile, fusion, swap_ab, output type."""
    op = str(row.op or "?").rsplit("::", 1)[-1]
    swap = " swap_ab" if row.swap_ab else ""
    return (f"{op} #{given(row.tactic, '?')} {given(row.tile, '?')} {given(row.fusion, '?')}{swap}"
            f" {given(row.output_dtype, '?')}")


def smem_target_capacity(result: StaticSmemResult) -> int | None:
    """The capacity the result was judged against (compiled into its probes), else the arch's known one."""
    capacity = result.capacity_bytes
    return capacity if is_number(capacity) else SMEM_OPTIN_BYTES_BY_ARCH.get(str(result.arch))


def _smem_sort_key(row: SmemRow) -> tuple:
    return (str(row.op), row.tactic if is_number(row.tactic) else math.inf, str(row.output_dtype))


def smem_chart(result: StaticSmemResult) -> str:
    """One horizontal bar per row: the kernel's SharedStorage bytes, red past the target arch's capacity."""
    rows = sorted(result.rows or [], key=_smem_sort_key)
    if not rows:
        return ""
    target = smem_target_capacity(result)
    capacities: dict[int, list[str]] = {}
    for arch in CAPACITY_ARCHES:
        capacities.setdefault(SMEM_OPTIN_BYTES_BY_ARCH[arch], []).append(arch)
    sizes = [r.kernel_smem_bytes for r in rows if is_number(r.kernel_smem_bytes)]
    ticks = nice_ticks(max([*sizes, *capacities]) * 1.05)
    label_w, plot_w, row_h, top, bottom = 300, 540, 17, 44, 34
    height = top + row_h * len(rows) + bottom
    svg = Svg("smem-chart", label_w + plot_w + 90, height,
              f"Shared memory per kernel (SharedStorage bytes) for {given(result.arch, '?')}, against the capacities of "
              + ", ".join(f"{'/'.join(a)} {v} B" for v, a in capacities.items()))
    x = Linear(0, ticks[-1], label_w, label_w + plot_w)
    plot_bottom = top + row_h * len(rows)
    for tick in ticks:
        svg.line(x(tick), top, x(tick), plot_bottom, "grid")
        svg.text(x(tick), plot_bottom + 14, grouped_bytes(tick), "tick", "middle")
    svg.text(label_w + plot_w / 2, plot_bottom + 30, "SharedStorage bytes per block", "axis-label", "middle")
    for index, row in enumerate(rows):
        y = top + index * row_h
        svg.text(label_w - 8, y + row_h - 5, smem_row_label(row), "row-label mono", "end")
        size = row.kernel_smem_bytes
        if not is_number(size):
            svg.text(label_w + 4, y + row_h - 5, row.verdict or "no size", "note")
            continue
        over = target is not None and size > target
        tip = f"{smem_row_label(row)}: {grouped_bytes(size)} B" + (f"; {row.explanation}" if row.explanation else "")
        svg.rect(label_w, y + 3, x(size) - label_w, row_h - 6, "bar over" if over else "bar fits", tip,
                 tactic=row.tactic, output=row.output_dtype, bytes=size, over="yes" if over else "no")
        svg.text(x(size) - 4, y + row_h - 5, grouped_bytes(size), "value inside", "end")
    for value, arches in capacities.items():
        is_target = target == value
        cls = "capacity target" if is_target else "capacity"
        svg.line(x(value), top - 6, x(value), plot_bottom, cls, arches=" ".join(arches), bytes=value)
        label = f"{' / '.join(a.upper() for a in arches)}: {grouped_bytes(value)} B"
        label_cls = "capacity-label target-label" if is_target else "capacity-label"
        svg.text(x(value), top - 10 - (12 if value == max(capacities) else 0), label, label_cls, "middle")
    return svg.render()


def _merged(rows: list[SmemRow]) -> list[SmemRow]:
    """One entry per kernel size and tactic; output types that compile to the same size share it."""
    merged: dict[tuple, SmemRow] = {}
    for row in rows:
        key = (row.op, row.tactic, row.kernel_smem_bytes)
        if key in merged:
            merged[key] = merged[key].model_copy(update={"output_dtype": f"{merged[key].output_dtype},{row.output_dtype}"})
        else:
            merged[key] = row
    return list(merged.values())


def kernels_near_limit(result: StaticSmemResult) -> tuple[int | None, list[SmemRow]]:
    """The limit, and the failing kernels plus the fitting ones nearest to it, largest first."""
    limit = smem_target_capacity(result)
    sized = [r for r in result.rows or [] if is_number(r.kernel_smem_bytes)]
    if limit is None or not sized:
        return limit, []
    merged = sorted(_merged(sized), key=lambda r: -r.kernel_smem_bytes)
    over = [r for r in merged if r.kernel_smem_bytes > limit]
    under = [r for r in merged if r.kernel_smem_bytes <= limit][:NEAREST_FITTING]
    return limit, over + under


def no_kernels_explanation(result: StaticSmemResult) -> str | None:
    """Why a result has no sized kernels (e.g. sm90 has no NVFP4 CUTLASS MoE kernels), instead of "none"."""
    if result.status != StepStatus.OK or any(is_number(r.kernel_smem_bytes) for r in result.rows or []):
        return None
    notes = "; ".join(str(n) for n in result.notes or [])
    what = (f"FlashInfer {given(result.flashinfer, '?')} has no {given(result.dtype, '')} CUTLASS MoE kernel for "
            f"{given(result.arch, '?')} that the analysis could size")
    return f"{what}: {notes}" if notes else (
        f"{what}, so no tile can fit or fail there: the tactic list of that arch is empty or not dispatchable "
        "(see the step log).")


def accounting_rows(result: StaticSmemResult) -> list[list[str]]:
    """Each failing kernel: its dynamic bytes (SharedStorage) and static ones, the limit, how far the two together
    are over it, and the builder's arithmetic."""
    limit, near = kernels_near_limit(result)
    rows = []
    for r in near:
        static = r.static_smem_bytes if is_number(r.static_smem_bytes) else 0
        if limit is None or r.kernel_smem_bytes + static <= limit:
            continue
        rows.append([smem_row_label(r), grouped_bytes(r.kernel_smem_bytes),
                     grouped_bytes(r.static_smem_bytes) if is_number(r.static_smem_bytes) else "not measured",
                     grouped_bytes(limit), f"+{grouped_bytes(r.kernel_smem_bytes + static - limit)}",
                     grouped_bytes(r.mainloop_smem_bytes) if is_number(r.mainloop_smem_bytes) else "-",
                     grouped_bytes(r.epilogue_smem_bytes) if is_number(r.epilogue_smem_bytes) else "-"])
    return rows


ACCOUNTING_HEADERS = ["kernel", "dynamic B (SharedStorage)", "static B", "limit B", "over by B", "mainloop B",
                      "epilogue B"]


def static_limit_line(result: StaticSmemResult) -> str | None:
    """Which static __shared__ limit the compile target sets (48 KiB for sm_120/sm_120f, 99 KiB for sm_120a)."""
    limits = (result.sources.static_smem_limits if result.sources else None) or {}
    if not limits:
        return None
    said = ", ".join(f"{target}: {grouped_bytes(limit)} B" for target, limit in limits.items())
    return (f"Compiled for {', '.join(limits)}; the compiler's limit on static __shared__ there is {said} "
            "(the launch limit above counts static and dynamic bytes together).")


def text_chart(result: StaticSmemResult) -> list[str]:
    """The kernels nearest the limit as text bars around a ``|`` at the limit (a fenced block for markdown)."""
    limit, near = kernels_near_limit(result)
    if limit is None or not near:
        return []
    span = max(abs(r.kernel_smem_bytes - limit) for r in near) or 1
    labels = [smem_row_label(r) for r in near]
    width = max(len(label) for label in labels)
    lines = ["```", f"{'':{width}}  {'':{TEXT_BAR_CHARS}}| limit {grouped_bytes(limit)} B"]
    for label, row in zip(labels, near):
        delta = row.kernel_smem_bytes - limit
        cells = max(1, round(abs(delta) / span * TEXT_BAR_CHARS)) if delta else 0
        left = (" " * (TEXT_BAR_CHARS - cells) + "#" * cells) if delta < 0 else " " * TEXT_BAR_CHARS
        right = "#" * cells if delta > 0 else ""
        sign = "+" if delta > 0 else "-" if delta < 0 else "±"
        lines.append(f"{label:{width}}  {left}|{right:{TEXT_BAR_CHARS}} {sign}{grouped_bytes(abs(delta))} B"
                     + (" OVER" if delta > 0 else ""))
    lines.append("```")
    return lines


def headline_markdown(step: ReportStep) -> list[str]:
    """The headline of ``report.md``: each failing kernel's bytes against the limit, then the text chart."""
    result: StaticSmemResult = step.result
    if result.status != StepStatus.OK:
        return []  # the step failed: the expectations and the steps table say why
    arch = given(result.arch, "?")
    explanation = no_kernels_explanation(result)
    if explanation:
        return ["", f"## Shared memory on {arch}", "", explanation]
    rows = accounting_rows(result)
    limit = smem_target_capacity(result)
    lines = ["", f"## Shared memory on {arch}: {len(rows)} kernel(s) over the {grouped_bytes(limit)} B limit", ""]
    if rows:
        lines += md_table(ACCOUNTING_HEADERS, rows) + [""]
    else:
        lines += [f"Every kernel fits in {grouped_bytes(limit)} B.", ""]
    if (static := static_limit_line(result)) is not None:
        lines += [static, ""]
    lines += ["Bytes against the limit (the kernels nearest it):", ""] + text_chart(result)
    return lines


def cause(step: ReportStep) -> list[str]:
    """The static analysis's finding in one line: how many kernels are over the limit, by how many bytes, which."""
    result: StaticSmemResult = step.result
    limit, near = kernels_near_limit(result)
    if result.status != StepStatus.OK or limit is None:
        return []
    over = [row for row in near if row.kernel_smem_bytes > limit]
    if not over:
        return []
    by_bytes = max(row.kernel_smem_bytes - limit for row in over)
    names = ", ".join(smem_row_label(row) for row in over[:3]) + (f" and {len(over) - 3} more" if len(over) > 3 else "")
    return [f"static analysis: {len(over)} kernel(s) over the {given(result.arch, '?')} limit of {grouped_bytes(limit)} B,"
            f" by up to {grouped_bytes(by_bytes)} B: {names}"]


def headroom_chart(result: StaticSmemResult) -> str:
    """SVG: one bar per kernel near the limit, from the limit to its size; the axis spans only these kernels."""
    limit, near = kernels_near_limit(result)
    if limit is None or not near:
        return ""
    span = max(abs(r.kernel_smem_bytes - limit) for r in near) or 1
    ticks = nice_ticks(span * 1.1, 3)
    label_w, plot_w, row_h, top, bottom = 300, 480, 20, 30, 36
    height = top + row_h * len(near) + bottom
    svg = Svg("smem-headroom-chart", label_w + plot_w + 110, height,
              f"Shared memory of the kernels nearest the {limit} B limit of {result.arch}, drawn against the limit")
    x = Linear(-ticks[-1], ticks[-1], label_w, label_w + plot_w)
    plot_bottom = top + row_h * len(near)
    for tick in [-t for t in reversed(ticks[1:])] + ticks:
        svg.line(x(tick), top, x(tick), plot_bottom, "grid")
        svg.text(x(tick), plot_bottom + 14, f"{tick:+,.0f}".replace(",", " ") if tick else "0", "tick", "middle")
    svg.text(label_w + plot_w / 2, plot_bottom + 30, f"bytes over (+) or under (-) the limit of {grouped_bytes(limit)} B",
             "axis-label", "middle")
    for index, row in enumerate(near):
        y = top + index * row_h
        size = row.kernel_smem_bytes
        delta = size - limit
        over = delta > 0
        svg.text(label_w - 8, y + row_h - 6, smem_row_label(row), "row-label mono", "end")
        x0, x1 = sorted((x(0), x(delta)))
        tip = f"{smem_row_label(row)}: {grouped_bytes(size)} B, {delta:+d} B against {grouped_bytes(limit)} B"
        svg.rect(x0, y + 4, max(x1 - x0, 1), row_h - 8, "bar over" if over else "bar fits", tip,
                 bytes=size, delta=delta, over="yes" if over else "no")
        svg.text(x1 + 4 if over else x0 - 4, y + row_h - 6, f"{delta:+,d} B".replace(",", " "), "value", "start" if over else "end")
    svg.line(x(0), top - 6, x(0), plot_bottom, "capacity target", bytes=limit)
    svg.text(x(0), top - 10, f"{given(result.arch, '').upper()} limit: {grouped_bytes(limit)} B", "capacity-label target-label",
             "middle")
    return svg.render()


def headline_html(step: ReportStep) -> list[Markup]:
    """Each failing kernel's bytes against the limit, and the chart drawn against the limit."""
    result: StaticSmemResult = step.result
    if result.status != StepStatus.OK:
        return []
    if no_kernels_explanation(result):
        return []  # said in the static-smem section
    return render_part("kind_sections/static_smem_headline.html", result=result,
                       limit=html_bytes(smem_target_capacity(result)), headers=ACCOUNTING_HEADERS,
                       accounting=[[(c, "num" if i else "mono") for i, c in enumerate(r)] for r in accounting_rows(result)],
                       static_limit=static_limit_line(result), chart=headroom_chart(result))


def details_html(step: ReportStep) -> list[Markup]:
    """Every kernel's SharedStorage against the SM90/SM100/SM120 capacities."""
    result: StaticSmemResult = step.result
    return render_part(
        "kind_sections/static_smem.html", result=result, failed=result.status != StepStatus.OK,
        explanation=no_kernels_explanation(result), capacity_symbol=given(result.capacity_symbol, "capacity"),
        capacity=html_bytes(smem_target_capacity(result)), failing=", ".join(result.failing_tiles or []) or "none",
        fitting=", ".join(result.fitting_tiles or []) or "none", unsupported=", ".join(result.unsupported_tiles or []),
        chart=smem_chart(result),
        caption=f"Each bar is one tactic and output type: sizeof(GemmKernel::SharedStorage) of the kernel compiled for "
                f"{result.arch}. Red bars exceed {result.arch}'s capacity; such a kernel fails at "
                "initialisation (cudaFuncSetAttribute, 'Error Internal'). Dashed lines: the per-block capacities of "
                "SM90, SM100 and SM120. Hover a bar for the builder's stage arithmetic.")


SECTIONS = (Section("headline", markdown=headline_markdown, html=headline_html, cause=cause), Section("details", html=details_html))
