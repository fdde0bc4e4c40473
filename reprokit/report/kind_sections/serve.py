"""The serve kind's sections of the reports, drawn from its result model (``reprokit/step_kinds/serve.py``)."""

from __future__ import annotations

from typing import Any, NamedTuple

from markupsafe import Markup

from reprokit.draw.svg import Linear, Svg, is_number, nice_ticks
from reprokit.draw.tables import md_table
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.report.kind_sections.triage import parse_log_time
from reprokit.report.templating import render_part
from reprokit.step_kinds.base import given
from reprokit.step_kinds.serve import (
    KIND,  # noqa: F401 - the kind these sections draw
    Performance,
    PerformanceRow,
    Sample,
    ServeResult,
    Telemetry,
    serve_findings,
    typed_performance,
)
from reprokit.step_kinds.triage import TriageResult

WARMUP_FROM = "triage"  # the kind whose timeline of the server log gives the warmup phases

# (phase, event that starts it, event that ends it), as the triage names sglang's startup lines
WARMUP_PHASES = (
    ("loading weights", None, "load_weight_end"),
    ("autotuning (FlashInfer MoE)", "server_autotune_start", "server_autotune_completed"),
    ("CUDA graph capture", "cuda_graph_capture_begin", "cuda_graph_capture_end"),
    ("ready", None, "ready"),
)
TELEMETRY_METRICS = (("power_w", "power (W)"), ("util_pct", "utilisation (%)"),
                     ("mem_used_mib", "memory used (MiB)"), ("sm_clock_mhz", "SM clock (MHz)"))
LATENCY_METRICS = (("median_ttft_ms", "TTFT"), ("median_itl_ms", "ITL"), ("median_e2e_latency_ms", "end-to-end"))


def rows(perf: Performance | None) -> list[PerformanceRow]:
    by_concurrency = (perf.by_concurrency if perf else None) or {}
    return sorted((r for r in by_concurrency.values() if is_number(r.concurrency)), key=lambda r: r.concurrency)


class WarmupPhase(NamedTuple):
    phase: str
    start_s: float  # seconds from the log's first timeline event
    end_s: float
    duration_s: float


def warmup_phases(triage: TriageResult | None) -> list[WarmupPhase]:
    """Each warmup phase with its start and end in seconds from the log's first timeline event."""
    events = {}
    for event in (triage.timeline if triage else None) or []:
        if parse_log_time(event.first) is not None:
            last = parse_log_time(event.last) or parse_log_time(event.first)
            events[event.event] = (parse_log_time(event.first), last)
    if not events:
        return []
    origin = min(first for first, _ in events.values())
    out, previous_end = [], origin
    for phase, start_event, end_event in WARMUP_PHASES:
        if end_event not in events:
            continue
        start = events[start_event][0] if start_event in events else previous_end
        end = events[end_event][1]
        if start_event is None and end <= start:
            continue  # the log's first event: nothing before it to measure
        out.append(WarmupPhase(phase, (start - origin).total_seconds(), (end - origin).total_seconds(),
                               (end - start).total_seconds()))
        previous_end = end
    return out


def _num(value: Any, digits: int = 1) -> str:
    return f"{value:,.{digits}f}".replace(",", " ") if is_number(value) else "-"


def table_rows(perf: Performance | None) -> list[list[str]]:
    return [[str(r.concurrency), str(given(r.completed, "-")),
             _num(r.output_throughput_tok_s), _num(r.median_ttft_ms), _num(r.median_itl_ms), _num(r.median_e2e_latency_ms),
             f"{_num(r.power_median_w)} of {_num(r.power_limit_w, 0)}" if is_number(r.power_median_w) else "-",
             _num(r.util_median_pct, 0), _num(r.sm_clock_median_mhz, 0), str(r.window or "")]
            for r in rows(perf)]


TABLE_HEADERS = ["concurrency", "requests", "output tok/s", "TTFT ms", "ITL ms", "e2e ms", "median power W",
                 "util %", "SM clock MHz", "GPU figures from"]


def markdown(step: ReportStep) -> list[str]:
    """The serve section of ``report.md``: outcome, answers, warmup, findings, the table per concurrency."""
    result: ServeResult = step.result
    triage = step.first_result(WARMUP_FROM)
    lines = ["", "## Serving", ""]
    ready = result.ready_after_s
    lines.append(f"Outcome **{given(result.outcome, '?')}**" + (f", ready after {ready:g} s" if is_number(ready) else "") + ".")
    answers = result.answers
    if answers is not None:
        lines += ["", f"Answers: not judged ({answers.skipped})." if not answers.checked else
                  f"Answers: {answers.right} of {answers.total} right"
                  + (f"; first wrong: {answers.first_wrong}." if answers.first_wrong else ".")]
    phases = warmup_phases(triage)
    if phases:
        lines += ["", "Warmup, from the server log: " + "; ".join(
            f"{p.phase} {p.start_s:.0f}-{p.end_s:.0f} s ({p.duration_s:.0f} s)" for p in phases) + "."]
    texts = serve_findings(result)
    if texts:
        lines += ["", "**Findings**", ""] + [f"- {t}" for t in texts]
    perf = typed_performance(result)
    if rows(perf):
        lines += [""] + md_table(TABLE_HEADERS, table_rows(perf))
    dump = result.crash_dump
    if dump:
        lines += ["", f"Crash dump, {dump.get('file')}:{dump.get('line')}:", "", "```", *dump.get("lines", []), "```"]
    return lines


# -- charts --------------------------------------------------------------------------------------

def throughput_chart(perf: Performance | None) -> str:
    """Output tokens per second at each concurrency (one bar each, the value on top)."""
    measured = [r for r in rows(perf) if is_number(r.output_throughput_tok_s)]
    if not measured:
        return ""
    left, top, plot_h, bar_w, gap = 64, 24, 180, 54, 26
    ticks = nice_ticks(max(r.output_throughput_tok_s for r in measured) * 1.15, 4)
    width = left + (bar_w + gap) * len(measured) + 20
    svg = Svg("serve-throughput-chart", width, top + plot_h + 44, "Output throughput (tokens/s) per concurrency")
    y = Linear(0, ticks[-1], top + plot_h, top)
    svg.text(left, 14, "output throughput (tok/s)", "chart-title")
    for tick in ticks:
        svg.line(left, y(tick), width - 10, y(tick), "grid")
        svg.text(left - 6, y(tick) + 4, f"{tick:g}", "tick", "end")
    for index, row in enumerate(measured):
        x0 = left + gap / 2 + index * (bar_w + gap)
        value = row.output_throughput_tok_s
        svg.rect(x0, y(value), bar_w, y(0) - y(value), "bar fits", f"concurrency {row.concurrency}: {value:.0f} tok/s",
                 concurrency=row.concurrency, tok_s=f"{value:.1f}")
        svg.text(x0 + bar_w / 2, y(value) - 4, f"{value:.0f}", "value", "middle")
        svg.text(x0 + bar_w / 2, top + plot_h + 16, f"c{row.concurrency}", "tick", "middle")
    svg.text(left + (width - left) / 2, top + plot_h + 36, "concurrency (requests in flight)", "axis-label", "middle")
    return svg.render()


def latency_chart(perf: Performance | None) -> str:
    """Median TTFT, ITL and end-to-end latency (ms) per concurrency, one line each."""
    measured = rows(perf)
    series = {label: [(i, getattr(r, key)) for i, r in enumerate(measured) if is_number(getattr(r, key))]
              for key, label in LATENCY_METRICS}
    series = {label: points for label, points in series.items() if points}
    if not series:
        return ""
    left, top, plot_w, plot_h = 64, 24, 300, 180
    ticks = nice_ticks(max(v for points in series.values() for _, v in points) * 1.1 or 1.0, 4)
    svg = Svg("serve-latency-chart", left + plot_w + 120, top + plot_h + 44, "Median latency (ms) per concurrency")
    x = Linear(0, max(len(measured) - 1, 1), left + 20, left + plot_w - 20)
    y = Linear(0, ticks[-1], top + plot_h, top)
    svg.text(left, 14, "median latency (ms)", "chart-title")
    for tick in ticks:
        svg.line(left, y(tick), left + plot_w, y(tick), "grid")
        svg.text(left - 6, y(tick) + 4, f"{tick:g}", "tick", "end")
    for index, row in enumerate(measured):
        svg.text(x(index), top + plot_h + 16, f"c{row.concurrency}", "tick", "middle")
    for number, (label, points) in enumerate(series.items()):
        coords = [(x(i), y(v)) for i, v in points]
        if len(coords) == 1:
            coords.append((coords[0][0] + 1, coords[0][1]))
        svg.polyline(coords, f"series s{number}", f"{label}: " + ", ".join(f"{v:.1f} ms" for _, v in points), metric=label)
        for i, v in points:
            svg.circle(x(i), y(v), 3, f"point p{number}", f"{label} at c{measured[i].concurrency}: {v:.1f} ms")
        svg.text(left + plot_w + 8, top + 12 + 14 * number, label, f"legend-label l{number}")
    svg.text(left + plot_w / 2, top + plot_h + 36, "concurrency", "axis-label", "middle")
    return svg.render()


def bench_windows(result: ServeResult) -> list[tuple[str, float, float]]:
    """(label, start, end) of each benchmark on the telemetry's clock, for shading the telemetry charts."""
    return [(f"c{r.concurrency}", r.t_start_s, r.t_end_s) for r in result.bench or []
            if is_number(r.t_start_s) and is_number(r.t_end_s)]


def telemetry_samples(telemetry: Telemetry | None) -> list[Sample]:
    """The samples of the serve step's ``telemetry`` that have a time."""
    return [s for s in (telemetry.samples if telemetry else None) or [] if is_number(s.t_s)]


def telemetry_charts(telemetry: Telemetry | None, windows: list[tuple[str, float, float]] | None = None) -> list[str]:
    """Small multiples: one chart per metric present, one line per GPU; the power chart shows the power limit.

    ``windows`` (label, start, end in the samples' seconds) are shaded: the benchmark at each concurrency.
    """
    samples = telemetry_samples(telemetry)
    colour = {gpu: index % 8 for index, gpu in enumerate(telemetry_gpus(samples))}
    limits = [s.power_limit_w for s in samples if is_number(s.power_limit_w)]
    charts = []
    for metric, title in TELEMETRY_METRICS:
        by_gpu: dict[str, list[tuple[float, float]]] = {}
        for sample in samples:
            if is_number(getattr(sample, metric)):
                by_gpu.setdefault(str(given(sample.gpu, "?")), []).append((sample.t_s, getattr(sample, metric)))
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


def telemetry_gpus(samples: list[Sample]) -> list[str]:
    """The GPUs of the telemetry samples, in index order; a GPU keeps its colour across the charts."""
    gpus = {str(given(s.gpu, "?")) for s in samples}
    return sorted(gpus, key=_gpu_order)


def _gpu_order(gpu: str) -> tuple:
    return (0, int(gpu), "") if gpu.isdigit() else (1, 0, gpu)


def html(step: ReportStep) -> list[Markup]:
    """Time to ready, warmup phases, findings, throughput and latency per concurrency, then the GPU telemetry."""
    result: ServeResult = step.result
    ready = result.ready_after_s
    perf = typed_performance(result)
    dump = result.crash_dump
    return render_part(
        "kind_sections/serve.html", outcome=given(result.outcome, "?"), ready=f"{ready:g}" if is_number(ready) else None,
        phases=[[p.phase, (f"{p.start_s:.0f}", "num"), (f"{p.end_s:.0f}", "num"), (f"{p.duration_s:.0f}", "num")]
                for p in warmup_phases(step.first_result(WARMUP_FROM))],
        findings=serve_findings(result), performance_headers=TABLE_HEADERS,
        performance=[[(c, "num") for c in r] for r in table_rows(perf)] if rows(perf) else [],
        throughput_chart=throughput_chart(perf) if rows(perf) else "", latency_chart=latency_chart(perf) if rows(perf) else "",
        crash_dump=dump, crash_dump_lines="\n".join(dump.get("lines", [])) if dump else "", **_telemetry(result))


def _telemetry(result: ServeResult) -> dict[str, Any]:
    """The serve step's ``telemetry``: ``{available, error, interval_s, per_gpu, samples}`` (a bare list of samples works too)."""
    telemetry = result.telemetry
    per_gpu = (telemetry.per_gpu if telemetry else None) or []
    return {"telemetry_charts": telemetry_charts(telemetry, bench_windows(result)),
            "telemetry_error": telemetry.error if telemetry else None,
            "telemetry_gpus": telemetry_gpus(telemetry_samples(telemetry)),
            "per_gpu": [[g.gpu, (g.samples, "num"), (g.max_power_w, "num"), (g.power_limit_w, "num"),
                         (g.mean_util_pct, "num")] for g in per_gpu]}


SECTIONS = (Section("findings", markdown=markdown, html=html),)
