"""Best tile per problem, the headline figures, and notes on where the time goes. Pure functions."""

from __future__ import annotations

from typing import Any

from reprokit.workloads.tile_sweep.shapes import GemmProblem

DECODE_TARGET_FRACTION_OF_COPY = 0.85  # the bar for memory-bound decode problems


def best_per_problem(problems: list[GemmProblem], rows: list[dict[str, Any]], backend: str = "triton") -> list[dict]:
    """For each problem, the fastest correct configuration of ``backend``."""
    best = []
    for problem in problems:
        candidates = [r for r in rows if r.get("backend") == backend and r.get("problem") == problem.id
                      and r.get("outcome") == "ok"]
        if not candidates:
            best.append({"problem": problem.id, "config": None, "reason": "no configuration ran correctly"})
            continue
        row = min(candidates, key=lambda r: r["time_median_s"])
        best.append({
            "problem": problem.id, "parallelism": problem.parallelism, "gemm": problem.gemm, "phase": problem.phase,
            "tokens_per_expert": problem.tokens_per_expert, "config": row["config"],
            **{key: row[key] for key in ("time_median_s", "tflops", "gbps", "bound", "fraction_of_roofline",
                                         "fraction_of_copy_bandwidth", "fraction_of_gemm_peak", "ctas")},
        })
    return best


def where_the_time_goes(problem: GemmProblem, best: dict[str, Any], ceilings: dict[str, Any],
                        launch_overhead_s: float | None, sm_count: int | None) -> str:
    """One sentence per shortfall: the traffic, the ideal time, the fixed launch cost, the CTA count."""
    weight_bytes = 2 * problem.experts * problem.n * problem.k
    total = problem.min_bytes()
    ideal_s = total / (ceilings["copy_gbps"] * 1e9)
    measured_s = best["time_median_s"]
    parts = [
        f"{problem.id} best {best['config']}: {best['fraction_of_copy_bandwidth']:.0%} of copy bandwidth"
        f" ({best['gbps']:.0f} of {ceilings['copy_gbps']:.0f} GB/s);"
        f" moves {total / 1e6:.1f} MB ({weight_bytes / total:.0%} weights) in {measured_s * 1e6:.1f} us,"
        f" {ideal_s * 1e6:.1f} us at copy bandwidth, {(measured_s - ideal_s) * 1e6:.1f} us over",
    ]
    if launch_overhead_s:
        parts.append(f"an empty launch costs {launch_overhead_s * 1e6:.1f} us of that"
                     f" ({launch_overhead_s / measured_s:.0%} of the time)")
    if ceilings.get("read_gbps"):
        parts.append(f"read-only bandwidth measured {ceilings['read_gbps']:.0f} GB/s, so this kernel reads at"
                     f" {best['gbps'] / ceilings['read_gbps']:.0%} of it")
    if sm_count and best.get("ctas"):
        parts.append(f"{best['ctas']} CTAs on {sm_count} SMs ({best['ctas'] / sm_count:.1f} per SM)")
    return "; ".join(parts)


def headline(problems: list[GemmProblem], best: list[dict], ceilings: dict[str, Any], cross: dict[str, Any],
             configs: list[dict], native_arch: str | None) -> dict[str, Any]:
    by_id = {p.id: p for p in problems}
    decode_ep = [b for b in best if b.get("config") and b["phase"] == "decode" and b["parallelism"].startswith("ep")]
    prefill = [b for b in best if b.get("config") and b["phase"] == "prefill"]
    worst_decode = min(decode_ep, key=lambda b: b["fraction_of_copy_bandwidth"], default=None)
    best_prefill = max(prefill, key=lambda b: b["fraction_of_gemm_peak"], default=None)
    fails_here = [c["id"] for c in configs if c.get("launch", {}).get("outcome") not in (None, "loaded", "not_attempted")]
    return {
        "copy_gbps": ceilings.get("copy_gbps"),
        "read_gbps": ceilings.get("read_gbps"),
        "dense_gemm_tflops": ceilings.get("dense_gemm_tflops"),
        "decode_ep_worst_best_tile": worst_decode and {
            "problem": worst_decode["problem"], "config": worst_decode["config"],
            "fraction_of_copy_bandwidth": worst_decode["fraction_of_copy_bandwidth"], "gbps": worst_decode["gbps"],
        },
        "decode_ep_meets_target": None if worst_decode is None else
        worst_decode["fraction_of_copy_bandwidth"] >= DECODE_TARGET_FRACTION_OF_COPY,
        "decode_target_fraction_of_copy": DECODE_TARGET_FRACTION_OF_COPY,
        "prefill_best": best_prefill and {
            "problem": best_prefill["problem"], "config": best_prefill["config"], "tflops": best_prefill["tflops"],
            "fraction_of_gemm_peak": best_prefill["fraction_of_gemm_peak"],
        },
        "configs_failing_here": fails_here,
        "native_arch": native_arch,
        "configs_not_fitting": {arch: section["does_not_fit_there"] for arch, section in cross.get("cross_arch", {}).items()},
        "configs_running_here_but_not_fitting": {
            arch: section["runs_here_but_not_there"] for arch, section in cross.get("cross_arch", {}).items()},
        "disagreements": len(cross.get("disagreements", [])),
        "problems": len(by_id),
    }


def decode_notes(problems: list[GemmProblem], best: list[dict], ceilings: dict[str, Any],
                 launch_overhead_s: float | None, sm_count: int | None) -> list[str]:
    """A note for every memory-bound decode problem whose best tile misses the target."""
    by_id = {p.id: p for p in problems}
    notes = []
    for entry in best:
        if not entry.get("config") or entry["phase"] != "decode" or not entry["parallelism"].startswith("ep"):
            continue
        if entry["fraction_of_copy_bandwidth"] < DECODE_TARGET_FRACTION_OF_COPY:
            notes.append(where_the_time_goes(by_id[entry["problem"]], entry, ceilings, launch_overhead_s, sm_count))
    return notes
