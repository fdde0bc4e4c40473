"""The headline of a static shared-memory result: each failing kernel's bytes against the limit.

The overflow that breaks SM120 is 1 KiB on 100 KiB, a sliver on a chart
drawn from zero. Here every kernel is drawn against the limit instead: a
bar is its distance from the limit (over to the right, under to the left),
and the scale spans only the kernels nearest the limit, so 1024 B is wide.
Markdown gets the same chart in text, readable in a CI job summary.
"""

from __future__ import annotations

from typing import Any

from reprokit.report.charts import grouped_bytes, smem_row_label, smem_target_capacity
from reprokit.report.svg import Linear, Svg, is_number, nice_ticks

NEAREST_FITTING = 4  # fitting kernels shown next to the failing ones: the ones closest to the limit
TEXT_BAR_CHARS = 24


def _merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per kernel size and tactic; output types that compile to the same size share it."""
    merged: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        key = (row.get("op"), row.get("tactic"), row.get("kernel_smem_bytes"))
        if key in merged:
            merged[key]["output_dtype"] = f"{merged[key]['output_dtype']},{row.get('output_dtype')}"
        else:
            merged[key] = dict(row)
    return list(merged.values())


def kernels_near_limit(result: dict[str, Any]) -> tuple[int | None, list[dict[str, Any]]]:
    """The limit, and the failing kernels plus the fitting ones nearest to it, largest first."""
    limit = smem_target_capacity(result)
    sized = [r for r in result.get("rows") or [] if isinstance(r, dict) and is_number(r.get("kernel_smem_bytes"))]
    if limit is None or not sized:
        return limit, []
    merged = sorted(_merged(sized), key=lambda r: -r["kernel_smem_bytes"])
    over = [r for r in merged if r["kernel_smem_bytes"] > limit]
    under = [r for r in merged if r["kernel_smem_bytes"] <= limit][:NEAREST_FITTING]
    return limit, over + under


def no_kernels_explanation(result: dict[str, Any]) -> str | None:
    """Why a result has no sized kernels (e.g. sm90 has no NVFP4 CUTLASS MoE kernels), instead of "none"."""
    if result.get("status") not in (None, "ok") or any(isinstance(r, dict) and is_number(r.get("kernel_smem_bytes")) for r in result.get("rows") or []):
        return None
    notes = "; ".join(str(n) for n in result.get("notes") or [])
    what = (f"FlashInfer {result.get('flashinfer', '?')} has no {result.get('dtype', '')} CUTLASS MoE kernel for "
            f"{result.get('arch', '?')} that the analysis could size")
    return f"{what}: {notes}" if notes else (
        f"{what}, so no tile can fit or fail there: the tactic list of that arch is empty or not dispatchable "
        "(see the step log).")


def accounting_rows(result: dict[str, Any]) -> list[list[str]]:
    """Each failing kernel: its SharedStorage, the limit, how far over, and the builder's arithmetic."""
    limit, near = kernels_near_limit(result)
    return [[smem_row_label(r), grouped_bytes(r["kernel_smem_bytes"]), grouped_bytes(limit),
             f"+{grouped_bytes(r['kernel_smem_bytes'] - limit)}",
             grouped_bytes(r["mainloop_smem_bytes"]) if is_number(r.get("mainloop_smem_bytes")) else "-",
             grouped_bytes(r["epilogue_smem_bytes"]) if is_number(r.get("epilogue_smem_bytes")) else "-"]
            for r in near if limit is not None and r["kernel_smem_bytes"] > limit]


ACCOUNTING_HEADERS = ["kernel", "SharedStorage B", "limit B", "over by B", "mainloop B", "epilogue B"]


def text_chart(result: dict[str, Any]) -> list[str]:
    """The kernels nearest the limit as text bars around a ``|`` at the limit (a fenced block for markdown)."""
    limit, near = kernels_near_limit(result)
    if limit is None or not near:
        return []
    span = max(abs(r["kernel_smem_bytes"] - limit) for r in near) or 1
    labels = [smem_row_label(r) for r in near]
    width = max(len(label) for label in labels)
    lines = ["```", f"{'':{width}}  {'':{TEXT_BAR_CHARS}}| limit {grouped_bytes(limit)} B"]
    for label, row in zip(labels, near):
        delta = row["kernel_smem_bytes"] - limit
        cells = max(1, round(abs(delta) / span * TEXT_BAR_CHARS)) if delta else 0
        left = (" " * (TEXT_BAR_CHARS - cells) + "#" * cells) if delta < 0 else " " * TEXT_BAR_CHARS
        right = "#" * cells if delta > 0 else ""
        sign = "+" if delta > 0 else "-" if delta < 0 else "±"
        lines.append(f"{label:{width}}  {left}|{right:{TEXT_BAR_CHARS}} {sign}{grouped_bytes(abs(delta))} B"
                     + (" OVER" if delta > 0 else ""))
    lines.append("```")
    return lines


def markdown(result: dict[str, Any] | None, table) -> list[str]:
    """The headline of ``report.md``; ``table`` is the report's markdown table helper."""
    if not isinstance(result, dict) or result.get("status") not in (None, "ok"):
        return []  # the step failed: the expectations and the steps table say why
    arch = result.get("arch", "?")
    explanation = no_kernels_explanation(result)
    if explanation:
        return ["", f"## Shared memory on {arch}", "", explanation]
    rows = accounting_rows(result)
    limit = smem_target_capacity(result)
    lines = ["", f"## Shared memory on {arch}: {len(rows)} kernel(s) over the {grouped_bytes(limit)} B limit", ""]
    if rows:
        lines += table(ACCOUNTING_HEADERS, rows) + [""]
    else:
        lines += [f"Every kernel fits in {grouped_bytes(limit)} B.", ""]
    lines += ["Bytes against the limit (the kernels nearest it):", ""] + text_chart(result)
    return lines


def headroom_chart(result: dict[str, Any]) -> str:
    """SVG: one bar per kernel near the limit, from the limit to its size; the axis spans only these kernels."""
    limit, near = kernels_near_limit(result)
    if limit is None or not near:
        return ""
    span = max(abs(r["kernel_smem_bytes"] - limit) for r in near) or 1
    ticks = nice_ticks(span * 1.1, 3)
    label_w, plot_w, row_h, top, bottom = 300, 480, 20, 30, 36
    height = top + row_h * len(near) + bottom
    svg = Svg("smem-headroom-chart", label_w + plot_w + 110, height,
              f"Shared memory of the kernels nearest the {limit} B limit of {result.get('arch')}, drawn against the limit")
    x = Linear(-ticks[-1], ticks[-1], label_w, label_w + plot_w)
    plot_bottom = top + row_h * len(near)
    for tick in [-t for t in reversed(ticks[1:])] + ticks:
        svg.line(x(tick), top, x(tick), plot_bottom, "grid")
        svg.text(x(tick), plot_bottom + 14, f"{tick:+,.0f}".replace(",", " ") if tick else "0", "tick", "middle")
    svg.text(label_w + plot_w / 2, plot_bottom + 30, f"bytes over (+) or under (-) the limit of {grouped_bytes(limit)} B",
             "axis-label", "middle")
    for index, row in enumerate(near):
        y = top + index * row_h
        size = row["kernel_smem_bytes"]
        delta = size - limit
        over = delta > 0
        svg.text(label_w - 8, y + row_h - 6, smem_row_label(row), "row-label mono", "end")
        x0, x1 = sorted((x(0), x(delta)))
        tip = f"{smem_row_label(row)}: {grouped_bytes(size)} B, {delta:+d} B against {grouped_bytes(limit)} B"
        svg.rect(x0, y + 4, max(x1 - x0, 1), row_h - 8, "bar over" if over else "bar fits", tip,
                 bytes=size, delta=delta, over="yes" if over else "no")
        svg.text(x1 + 4 if over else x0 - 4, y + row_h - 6, f"{delta:+,d} B".replace(",", " "), "value", "start" if over else "end")
    svg.line(x(0), top - 6, x(0), plot_bottom, "capacity target", bytes=limit)
    svg.text(x(0), top - 10, f"{str(result.get('arch', '')).upper()} limit: {grouped_bytes(limit)} B", "capacity-label target-label",
             "middle")
    return svg.render()
