"""Serving performance from the serve step's own records: per concurrency, how fast and how busy the GPUs were.

One owner for these numbers: the serve workload writes them into its result
(``performance``), so kit expectations can judge them, and the reports
recompute them the same way for records written before the field existed.
Standard library only (it runs on the GPU host with the workload).

A benchmark row carries the window it ran in (``t_start_s``/``t_end_s``, on
the telemetry's clock); the telemetry samples inside that window are that
concurrency's GPU figures. Without windows, the whole run's samples are used
and the figures say so (``window: "whole run"``).
"""

from __future__ import annotations

import statistics
from typing import Any

UNDERFED_POWER_FRACTION = 0.6  # median power below 60% of the limit while benchmarking: the GPUs wait for work
FLAT_THROUGHPUT_GAIN = 1.15  # less than 15% more throughput from the next concurrency step: throughput is flat


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def window_stats(samples: list[dict[str, Any]], start_s: float | None = None, end_s: float | None = None) -> dict[str, Any]:
    """Medians over all GPUs of the samples in [start_s, end_s] (all samples when no window is given)."""
    inside = [s for s in samples if isinstance(s, dict) and _number(s.get("t_s"))
              and (start_s is None or s["t_s"] >= start_s) and (end_s is None or s["t_s"] <= end_s)]
    limits = [s["power_limit_w"] for s in inside if _number(s.get("power_limit_w"))]
    power = _median([s["power_w"] for s in inside if _number(s.get("power_w"))])
    limit = max(limits) if limits else None
    return {
        "samples": len(inside),
        "gpus": len({s.get("gpu") for s in inside}),
        "power_median_w": power,
        "power_limit_w": limit,
        "power_median_fraction_of_limit": round(power / limit, 3) if power is not None and limit else None,
        "util_median_pct": _median([s["util_pct"] for s in inside if _number(s.get("util_pct"))]),
        "sm_clock_median_mhz": _median([s["sm_clock_mhz"] for s in inside if _number(s.get("sm_clock_mhz"))]),
    }


def performance(bench_rows: list[dict[str, Any]] | None, samples: list[dict[str, Any]] | None,
                ready_after_s: float | None = None) -> dict[str, Any]:
    """``{"ready_after_s", "by_concurrency": {"c32": {...}}}``: throughput, latency and GPU figures per concurrency."""
    by_concurrency: dict[str, dict[str, Any]] = {}
    for row in bench_rows or []:
        if not isinstance(row, dict) or not _number(row.get("concurrency")):
            continue
        gpu, window = _gpu_figures(row, samples or [])
        by_concurrency[f"c{int(row['concurrency'])}"] = {
            "concurrency": int(row["concurrency"]),
            "completed": row.get("completed"),
            "output_throughput_tok_s": row.get("output_throughput"),
            "request_throughput_per_s": row.get("request_throughput"),
            "median_ttft_ms": row.get("median_ttft_ms"),
            "median_itl_ms": row.get("median_itl_ms"),
            "median_e2e_latency_ms": row.get("median_e2e_latency_ms"),
            "window": window,
            **gpu,
        }
    return {"ready_after_s": ready_after_s, "by_concurrency": by_concurrency}


def _gpu_figures(row: dict[str, Any], samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The GPU figures of a benchmark's window; a window shorter than the sampling interval takes the nearest round."""
    start, end = row.get("t_start_s"), row.get("t_end_s")
    if not (_number(start) and _number(end)):
        return window_stats(samples), "whole run"
    inside = window_stats(samples, start, end)
    if inside["samples"] or not samples:
        return inside, f"benchmark {start:g}-{end:g} s"
    times = sorted({s["t_s"] for s in samples if isinstance(s, dict) and _number(s.get("t_s"))})
    if not times:
        return inside, f"benchmark {start:g}-{end:g} s"
    nearest = min(times, key=lambda t: abs(t - (start + end) / 2))
    return window_stats(samples, nearest, nearest), f"nearest sample at {nearest:g} s (benchmark {start:g}-{end:g} s)"


def findings(perf: dict[str, Any]) -> list[dict[str, Any]]:
    """What the numbers say, each with its evidence: underfed GPUs, flat throughput."""
    rows = sorted((r for r in (perf.get("by_concurrency") or {}).values() if isinstance(r, dict)),
                  key=lambda r: r["concurrency"])
    out: list[dict[str, Any]] = []
    for row in rows[-1:]:  # at low concurrency idle GPUs are expected; at the highest they should be busy
        fraction = row.get("power_median_fraction_of_limit")
        if _number(fraction) and fraction < UNDERFED_POWER_FRACTION:
            out.append({"finding": "gpus-underfed", "concurrency": row["concurrency"],
                        "text": f"GPUs underfed: median {row['power_median_w']:g} W of {row['power_limit_w']:g} W at "
                                f"concurrency {row['concurrency']} ({fraction:.0%} of the limit; utilisation "
                                f"{row.get('util_median_pct')} %, {row.get('gpus')} GPU(s), {row.get('samples')} samples, "
                                f"{row.get('window')})"})
    measured = [r for r in rows if _number(r.get("output_throughput_tok_s")) and r["output_throughput_tok_s"] > 0]
    for low, high in zip(measured, measured[1:]):
        gain = high["output_throughput_tok_s"] / low["output_throughput_tok_s"]
        if gain < FLAT_THROUGHPUT_GAIN:
            out.append({"finding": "throughput-flat", "concurrency": high["concurrency"],
                        "text": f"throughput flat from concurrency {low['concurrency']} to {high['concurrency']}: "
                                f"{low['output_throughput_tok_s']:.0f} -> {high['output_throughput_tok_s']:.0f} tok/s "
                                f"(x{gain:.2f} for x{high['concurrency'] / low['concurrency']:g} the concurrency)"})
    return out
