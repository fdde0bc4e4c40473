"""The tile-sweep kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/tile_sweep.py``)."""

from __future__ import annotations

import math

from markupsafe import Markup

from reprokit.draw.svg import Linear, Log, Svg, decade_ticks, is_number, legend, nice_ticks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.report.templating import render_part
from reprokit.step_kinds.base import given
from reprokit.step_kinds.tile_sweep import (
    KIND,  # noqa: F401 - the kind these sections draw
    BestTile,
    Problem,
    Roofline,
    SweepDevice,
    SweepResult,
)

PHASE_CLASS = {"decode": "decode", "prefill": "prefill"}


def _measured(best: list[BestTile]) -> list[BestTile]:
    return [b for b in best if is_number(b.fraction_of_roofline)]


def sweep_fraction_chart(result: SweepResult) -> str:
    """Fraction of the roofline the best tile reaches, one bar per problem, decode and prefill coloured apart."""
    best = _measured(result.best or [])
    if not best:
        return ""
    bar_w, left, top, plot_h, bottom = 18, 56, 24, 220, 110
    high = max(1.1, max(b.fraction_of_roofline for b in best) * 1.05)
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
    target = result.headline.decode_target_fraction_of_copy if result.headline else None
    if is_number(target):
        svg.line(left, y(target), right, y(target), "reference target")
        svg.text(right + 6, y(target) + 4, f"decode target: {target:.0%} of copy", "reference-label")
    for index, entry in enumerate(best):
        x0 = left + index * bar_w + 2
        fraction = entry.fraction_of_roofline
        phase = PHASE_CLASS.get(str(entry.phase), "other")
        tip = (f"{entry.problem} ({entry.phase}): {entry.config} reaches {fraction:.0%} of the "
               f"roofline ({given(entry.bound, '?')}-bound)")
        svg.rect(x0, y(fraction), bar_w - 4, y(0) - y(fraction), f"bar {phase}", tip,
                 problem=entry.problem, phase=entry.phase, fraction=f"{fraction:.4f}")
        svg.text(x0 + (bar_w - 4) / 2, top + plot_h + 8, given(entry.problem, "?"), "tick mono", "end", rotate=-60)
    legend(svg, left, top - 10, [("decode", "decode"), ("prefill", "prefill")])
    return svg.render()


def sweep_roofline_chart(result: SweepResult) -> str:
    """Achieved TFLOP/s against arithmetic intensity (log-log) under the roof of the run's own ceilings."""
    roofline = result.roofline or Roofline()
    copy_gbps, peak_tflops = roofline.copy_gbps, roofline.dense_gemm_tflops
    problems = {p.id: p for p in result.problems or []}
    points = []
    for entry in _measured(result.best or []):
        problem = problems.get(entry.problem) or Problem()
        flops, min_bytes, tflops = problem.flops, problem.min_bytes, entry.tflops
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
        phase = PHASE_CLASS.get(str(entry.phase), "other")
        tip = (f"{entry.problem}: {entry.config}, {tflops:.1f} TFLOP/s at {intensity:.1f} FLOP/B, "
               f"{entry.fraction_of_roofline:.0%} of the roofline")
        svg.circle(x(intensity), y(tflops), 4, f"point {phase}", tip, problem=entry.problem)
    legend(svg, left + plot_w + 10, top + 40, [("decode", "decode"), ("prefill", "prefill")])
    return svg.render()


def html(step: ReportStep) -> list[Markup]:
    """The run's own ceilings, the roofline charts, the best tile of each problem."""
    result: SweepResult = step.result
    roofline = result.roofline or Roofline()
    device = result.device or SweepDevice()
    ceilings = []
    if is_number(roofline.copy_gbps):
        ceilings.append(f"copy {roofline.copy_gbps:.0f} GB/s (read + write)")
    if is_number(roofline.read_gbps):
        ceilings.append(f"read {roofline.read_gbps:.0f} GB/s")
    if is_number(roofline.dense_gemm_tflops):
        ceilings.append(f"dense bf16 GEMM {roofline.dense_gemm_tflops:.0f} TFLOP/s")
    rows = []
    for entry in result.best or []:
        time_s, fraction = entry.time_median_s, entry.fraction_of_roofline
        rows.append([entry.problem, entry.phase, (entry.config or entry.reason, "mono"),
                     (f"{time_s * 1e6:.1f}" if is_number(time_s) else "", "num"),
                     (f"{entry.tflops:.1f}" if is_number(entry.tflops) else "", "num"),
                     (f"{entry.gbps:.0f}" if is_number(entry.gbps) else "", "num"),
                     entry.bound, (f"{fraction:.0%}" if is_number(fraction) else "", "num")])
    return render_part("kind_sections/tile_sweep.html", where=f" on {device.name} ({device.gpu_arch})" if device.name else "",
                       ceilings=", ".join(ceilings) or "none recorded", roofline_chart=sweep_roofline_chart(result),
                       fraction_chart=sweep_fraction_chart(result), best=rows)


SECTIONS = (Section("details", html=html),)
