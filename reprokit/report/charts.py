"""The report's charts, one function per chart, each from one step's ``result.json``.

Every function returns an inline ``<svg>`` (or ``""`` when there is nothing to
draw) and skips, never fails on, a row whose fields are missing: a partial
result still gives a partial chart.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from reprokit.report.svg import Linear, Log, Svg, decade_ticks, esc, is_number, nice_ticks
from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH

CAPACITY_ARCHES = ("sm90", "sm100", "sm120")  # the capacity lines drawn on the shared-memory chart
PHASE_CLASS = {"decode": "decode", "prefill": "prefill"}
TELEMETRY_METRICS = (("power_w", "power (W)"), ("util_pct", "utilisation (%)"),
                     ("mem_used_mib", "memory used (MiB)"), ("sm_clock_mhz", "SM clock (MHz)"))
TIME_FORMATS = ("%Y-%m-%d %H:%M:%S,%f", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f",
                "%Y-%m-%dT%H:%M:%S")


def grouped_bytes(value: float) -> str:
    return f"{int(value):,}".replace(",", " ")


# -- static-smem ---------------------------------------------------------------------------------

def smem_row_label(row: dict[str, Any]) -> str:
    """``gemm2 #22 128x256x128 FINALIZE swap_ab bf16``: op, tactic, tile, fusion, swap_ab, output type."""
    op = str(row.get("op") or "?").rsplit("::", 1)[-1]
    swap = " swap_ab" if row.get("swap_ab") else ""
    return f"{op} #{row.get('tactic', '?')} {row.get('tile', '?')} {row.get('fusion', '?')}{swap} {row.get('output_dtype', '?')}"


def smem_target_capacity(result: dict[str, Any]) -> int | None:
    """The capacity the result was judged against (compiled into its probes), else the arch's known one."""
    capacity = result.get("capacity_bytes")
    return capacity if is_number(capacity) else SMEM_OPTIN_BYTES_BY_ARCH.get(str(result.get("arch")))


def _smem_sort_key(row: dict[str, Any]) -> tuple:
    tactic = row.get("tactic")
    return (str(row.get("op")), tactic if is_number(tactic) else math.inf, str(row.get("output_dtype")))


def smem_chart(result: dict[str, Any]) -> str:
    """One horizontal bar per row: the kernel's SharedStorage bytes, red past the target arch's capacity."""
    rows = sorted((r for r in result.get("rows") or [] if isinstance(r, dict)), key=_smem_sort_key)
    if not rows:
        return ""
    target = smem_target_capacity(result)
    capacities: dict[int, list[str]] = {}
    for arch in CAPACITY_ARCHES:
        capacities.setdefault(SMEM_OPTIN_BYTES_BY_ARCH[arch], []).append(arch)
    sizes = [r["kernel_smem_bytes"] for r in rows if is_number(r.get("kernel_smem_bytes"))]
    ticks = nice_ticks(max([*sizes, *capacities]) * 1.05)
    label_w, plot_w, row_h, top, bottom = 300, 540, 17, 44, 34
    height = top + row_h * len(rows) + bottom
    svg = Svg("smem-chart", label_w + plot_w + 90, height,
              f"Shared memory per kernel (SharedStorage bytes) for {result.get('arch', '?')}, against the capacities of "
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
        size = row.get("kernel_smem_bytes")
        if not is_number(size):
            svg.text(label_w + 4, y + row_h - 5, row.get("verdict") or "no size", "note")
            continue
        over = target is not None and size > target
        tip = f"{smem_row_label(row)}: {grouped_bytes(size)} B" + (f"; {row['explanation']}" if row.get("explanation") else "")
        svg.rect(label_w, y + 3, x(size) - label_w, row_h - 6, "bar over" if over else "bar fits", tip,
                 tactic=row.get("tactic"), output=row.get("output_dtype"), bytes=size, over="yes" if over else "no")
        svg.text(x(size) - 4, y + row_h - 5, grouped_bytes(size), "value inside", "end")
    for value, arches in capacities.items():
        is_target = target == value
        cls = "capacity target" if is_target else "capacity"
        svg.line(x(value), top - 6, x(value), plot_bottom, cls, arches=" ".join(arches), bytes=value)
        label = f"{' / '.join(a.upper() for a in arches)}: {grouped_bytes(value)} B"
        label_cls = "capacity-label target-label" if is_target else "capacity-label"
        svg.text(x(value), top - 10 - (12 if value == max(capacities) else 0), label, label_cls, "middle")
    return svg.render()


# -- tile-sweep ----------------------------------------------------------------------------------

def _measured(best: list[Any]) -> list[dict[str, Any]]:
    return [b for b in best if isinstance(b, dict) and is_number(b.get("fraction_of_roofline"))]


def sweep_fraction_chart(result: dict[str, Any]) -> str:
    """Fraction of the roofline the best tile reaches, one bar per problem, decode and prefill coloured apart."""
    best = _measured(result.get("best") or [])
    if not best:
        return ""
    bar_w, left, top, plot_h, bottom = 18, 56, 24, 220, 110
    high = max(1.1, max(b["fraction_of_roofline"] for b in best) * 1.05)
    ticks = nice_ticks(high, 5)
    right = left + bar_w * len(best) + 4
    svg = Svg("sweep-fraction-chart", right + 170, top + plot_h + bottom,
              "Fraction of the measured roofline reached by the best tile of each problem")
    y = Linear(0, ticks[-1], top + plot_h, top)
    for tick in ticks:
        svg.line(left, y(tick), right, y(tick), "grid")
        svg.text(left - 6, y(tick) + 4, f"{tick:.0%}", "tick", "end")
    svg.line(left, y(1.0), right, y(1.0), "reference roof")
    svg.text(right + 6, y(1.0) + 4, "roofline (100%)", "reference-label")
    target = (result.get("headline") or {}).get("decode_target_fraction_of_copy")
    if is_number(target):
        svg.line(left, y(target), right, y(target), "reference target")
        svg.text(right + 6, y(target) + 4, f"decode target: {target:.0%} of copy", "reference-label")
    for index, entry in enumerate(best):
        x0 = left + index * bar_w + 2
        fraction = entry["fraction_of_roofline"]
        phase = PHASE_CLASS.get(str(entry.get("phase")), "other")
        tip = (f"{entry.get('problem')} ({entry.get('phase')}): {entry.get('config')} reaches {fraction:.0%} of the "
               f"roofline ({entry.get('bound', '?')}-bound)")
        svg.rect(x0, y(fraction), bar_w - 4, y(0) - y(fraction), f"bar {phase}", tip,
                 problem=entry.get("problem"), phase=entry.get("phase"), fraction=f"{fraction:.4f}")
        svg.text(x0 + (bar_w - 4) / 2, top + plot_h + 8, entry.get("problem", "?"), "tick mono", "end", rotate=-60)
    _legend(svg, left, top - 10, [("decode", "decode"), ("prefill", "prefill")])
    return svg.render()


def sweep_roofline_chart(result: dict[str, Any]) -> str:
    """Achieved TFLOP/s against arithmetic intensity (log-log) under the roof of the run's own ceilings."""
    roofline = result.get("roofline") or {}
    copy_gbps, peak_tflops = roofline.get("copy_gbps"), roofline.get("dense_gemm_tflops")
    problems = {p.get("id"): p for p in result.get("problems") or [] if isinstance(p, dict)}
    points = []
    for entry in _measured(result.get("best") or []):
        problem = problems.get(entry.get("problem")) or {}
        flops, min_bytes, tflops = problem.get("flops"), problem.get("min_bytes"), entry.get("tflops")
        if all(is_number(v) and v > 0 for v in (flops, min_bytes, tflops)):
            points.append((flops / min_bytes, tflops, entry))
    if not points or not (is_number(copy_gbps) and is_number(peak_tflops) and copy_gbps > 0 and peak_tflops > 0):
        return ""
    ridge = peak_tflops * 1e12 / (copy_gbps * 1e9)  # FLOP per byte where the two ceilings meet
    intensities = [p[0] for p in points] + [ridge]
    x_lo, x_hi = 10 ** math.floor(math.log10(min(intensities) / 1.5)), 10 ** math.ceil(math.log10(max(intensities) * 1.5))
    y_lo = 10 ** math.floor(math.log10(min(p[1] for p in points) / 1.5))
    y_hi = 10 ** math.ceil(math.log10(peak_tflops * 1.5))
    left, top, plot_w, plot_h = 64, 28, 560, 300
    svg = Svg("sweep-roofline-chart", left + plot_w + 190, top + plot_h + 48,
              f"Roofline: copy {copy_gbps:.0f} GB/s, dense GEMM {peak_tflops:.0f} TFLOP/s, measured in this run")
    x = Log(x_lo, x_hi, left, left + plot_w)
    y = Log(y_lo, y_hi, top + plot_h, top)
    for tick in decade_ticks(x_lo, x_hi):
        svg.line(x(tick), top, x(tick), top + plot_h, "grid")
        svg.text(x(tick), top + plot_h + 14, f"{tick:g}", "tick", "middle")
    for tick in decade_ticks(y_lo, y_hi):
        svg.line(left, y(tick), left + plot_w, y(tick), "grid")
        svg.text(left - 6, y(tick) + 4, f"{tick:g}", "tick", "end")
    svg.text(left + plot_w / 2, top + plot_h + 32, "arithmetic intensity (FLOP per byte moved, at least)", "axis-label", "middle")
    svg.text(14, top + plot_h / 2, "TFLOP/s", "axis-label", "middle", rotate=-90)
    x_start = max(x_lo, y_lo * 1000 / copy_gbps)
    svg.polyline([(x(x_start), y(copy_gbps * x_start / 1000)), (x(ridge), y(peak_tflops)), (x(x_hi), y(peak_tflops))],
                 "roof", f"roof: min({copy_gbps:.0f} GB/s x intensity, {peak_tflops:.0f} TFLOP/s)")
    svg.text(x(x_hi) + 6, y(peak_tflops) + 4, f"dense GEMM {peak_tflops:.0f} TFLOP/s", "reference-label")
    on_slope = math.sqrt(x_start * ridge)  # label the bandwidth slope halfway up, above-left of the line
    svg.text(x(on_slope) - 8, y(copy_gbps * on_slope / 1000) - 6, f"copy {copy_gbps:.0f} GB/s", "reference-label", "end")
    for intensity, tflops, entry in points:
        phase = PHASE_CLASS.get(str(entry.get("phase")), "other")
        tip = (f"{entry.get('problem')}: {entry.get('config')}, {tflops:.1f} TFLOP/s at {intensity:.1f} FLOP/B, "
               f"{entry['fraction_of_roofline']:.0%} of the roofline")
        svg.circle(x(intensity), y(tflops), 4, f"point {phase}", tip, problem=entry.get("problem"))
    _legend(svg, left + plot_w + 10, top + 40, [("decode", "decode"), ("prefill", "prefill")])
    return svg.render()


# -- triage --------------------------------------------------------------------------------------

def parse_log_time(text: Any) -> dt.datetime | None:
    """A log timestamp as the triage writes it (``2026-02-19 10:05:14,016`` or without the fraction)."""
    if not isinstance(text, str):
        return None
    for fmt in TIME_FORMATS:
        try:
            return dt.datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def timeline_chart(result: dict[str, Any]) -> str:
    """One row per triage timeline event: a span from its first to its last occurrence, seconds from the first event."""
    entries = []
    for event in result.get("timeline") or []:
        if not isinstance(event, dict):
            continue
        first, last = parse_log_time(event.get("first")), parse_log_time(event.get("last"))
        if first is not None:
            entries.append((event, first, last if last is not None and last >= first else first))
    if not entries:
        return ""
    start = min(e[1] for e in entries)
    end_s = max(max((e[2] - start).total_seconds() for e in entries), 1.0)
    label_w, plot_w, row_h, top, bottom = 230, 560, 20, 12, 40
    ticks = nice_ticks(end_s, 6)
    svg = Svg("timeline-chart", label_w + plot_w + 80, top + row_h * len(entries) + bottom,
              f"Warmup and autotune timeline from {start.isoformat(sep=' ')}")
    x = Linear(0, ticks[-1], label_w, label_w + plot_w)
    plot_bottom = top + row_h * len(entries)
    for tick in ticks:
        svg.line(x(tick), top, x(tick), plot_bottom, "grid")
        svg.text(x(tick), plot_bottom + 14, f"{tick:g} s", "tick", "middle")
    svg.text(label_w + plot_w / 2, plot_bottom + 32, f"seconds after {start.isoformat(sep=' ')}", "axis-label", "middle")
    for index, (event, first, last) in enumerate(entries):
        y = top + index * row_h
        name = str(event.get("event", "?"))
        x0, x1 = x((first - start).total_seconds()), x((last - start).total_seconds())
        kind = _event_class(name)
        tip = f"{name}: {event.get('count', '?')} line(s), {event.get('first')} .. {event.get('last')}"
        if event.get("first_location"):
            tip += f" (first at {event['first_location']})"
        svg.text(label_w - 8, y + row_h - 6, name, "row-label mono", "end")
        svg.rect(x0, y + 4, max(x1 - x0, 3), row_h - 8, f"span {kind}", tip, event=name, count=event.get("count"))
        if is_number(event.get("count")) and event["count"] > 1:
            svg.text(max(x1, x0 + 3) + 4, y + row_h - 6, f"x{event['count']}", "value")
    return svg.render()


def _event_class(name: str) -> str:
    if any(word in name for word in ("fail", "skip", "error", "fatal")):
        return "bad"
    if name in ("ready", "uvicorn_startup_complete"):
        return "good"
    return "neutral"


# -- telemetry -----------------------------------------------------------------------------------

def telemetry_samples(telemetry: Any) -> list[dict[str, Any]]:
    """The samples of the serve step's ``telemetry`` (``{"samples": [...], ...}``, or the list itself)."""
    samples = telemetry.get("samples") if isinstance(telemetry, dict) else telemetry
    return [s for s in samples or [] if isinstance(s, dict) and is_number(s.get("t_s"))] if isinstance(samples, list) else []


def telemetry_charts(telemetry: Any, windows: list[tuple[str, float, float]] | None = None) -> list[str]:
    """Small multiples: one chart per metric present, one line per GPU; the power chart shows the power limit.

    ``windows`` (label, start, end in the samples' seconds) are shaded: the benchmark at each concurrency.
    """
    samples = telemetry_samples(telemetry)
    colour = {gpu: index % 8 for index, gpu in enumerate(telemetry_gpus(samples))}
    limits = [s["power_limit_w"] for s in samples if is_number(s.get("power_limit_w"))]
    charts = []
    for metric, title in TELEMETRY_METRICS:
        by_gpu: dict[str, list[tuple[float, float]]] = {}
        for sample in samples:
            if is_number(sample.get(metric)):
                by_gpu.setdefault(str(sample.get("gpu", "?")), []).append((sample["t_s"], sample[metric]))
        if not by_gpu:
            continue
        left, top, plot_w, plot_h = 52, 24, 330, 130
        t_lo = min(t for series in by_gpu.values() for t, _ in series)
        t_hi = max(t for series in by_gpu.values() for t, _ in series)
        limit = max(limits) if metric == "power_w" and limits else None
        high = 100.0 if metric == "util_pct" else max([v for series in by_gpu.values() for _, v in series] + [limit or 0]) * 1.1
        ticks = nice_ticks(high, 4)
        svg = Svg(f"telemetry-{metric}", left + plot_w + 16, top + plot_h + 34, f"{title} per GPU over time")
        x = Linear(t_lo, t_hi if t_hi > t_lo else t_lo + 1, left, left + plot_w)
        y = Linear(0, ticks[-1], top + plot_h, top)
        svg.text(left, 14, title, "chart-title")
        for label, start, end in windows or []:
            if t_lo <= end and start <= t_hi:
                x0, x1 = x(max(start, t_lo)), x(min(end, t_hi))
                svg.rect(x0, top, max(x1 - x0, 2), plot_h, "window", f"benchmark {label}: {start:g}-{end:g} s", window=label)
                svg.text(x0 + 2, top + 10, label, "window-label")
        for tick in ticks:
            svg.line(left, y(tick), left + plot_w, y(tick), "grid")
            svg.text(left - 6, y(tick) + 4, f"{tick:g}", "tick", "end")
        if limit:
            svg.line(left, y(limit), left + plot_w, y(limit), "reference limit", watts=limit)
            svg.text(left + plot_w - 2, y(limit) - 4, f"power limit {limit:g} W", "reference-label", "end")
        svg.text(left, top + plot_h + 14, f"{t_lo:g} s", "tick", "start")
        svg.text(left + plot_w, top + plot_h + 14, f"{t_hi:g} s", "tick", "end")
        for gpu, series in sorted(by_gpu.items(), key=lambda kv: _gpu_order(kv[0])):
            series.sort()
            points = [(x(t), y(v)) for t, v in series]
            if len(points) == 1:
                points.append((points[0][0] + 1, points[0][1]))
            svg.polyline(points, f"series s{colour[gpu]}", f"GPU {gpu}: {title}, {len(series)} sample(s)", gpu=gpu, metric=metric)
        charts.append(svg.render())
    return charts


def telemetry_gpus(samples: list[dict[str, Any]]) -> list[str]:
    """The GPUs of the telemetry samples, in index order; a GPU keeps its colour across the charts."""
    gpus = {str(s.get("gpu", "?")) for s in samples}
    return sorted(gpus, key=_gpu_order)


def _gpu_order(gpu: str) -> tuple:
    return (0, int(gpu), "") if gpu.isdigit() else (1, 0, gpu)


def _legend(svg: Svg, x: float, y: float, items: list[tuple[str, str]]) -> None:
    for index, (cls, label) in enumerate(items):
        svg.add(f'<rect class="legend {esc(cls)}" x="{x + index * 90}" y="{y - 9}" width="10" height="10"/>')
        svg.text(x + index * 90 + 14, y, label, "legend-label")
