"""``invoke compare RUN_A RUN_B``: what changed from one run record to another.

Typically two runs of a kit with different FlashInfer pins, or one kit on two
hosts. Read only from the records (manifest, ``verdict.json``, each step's
``result.json``): the environment (GPU, driver, images), which pins differ,
whether the verdict and each expectation changed, which tiles newly fit or
newly fail the shared-memory analysis, how the sweep's best tiles moved
(ratios B/A), how the triage changed, and the serving figures per
concurrency. A figure that got worse by more than the tolerance is flagged as
a regression. Data and text only: the front end (``reprokit.records.history``)
decides the exit code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.draw.svg import is_number
from reprokit.draw.tables import md_table as _table
from reprokit.errors import ConfigError
from reprokit.records.fingerprint import Driver, Fingerprint
from reprokit.records.models import Manifest, Verdict, Word
from reprokit.records.run_dir import load_manifest, load_verdict
from reprokit.step_kinds import STEP_KINDS, Result, ResultError
from reprokit.step_kinds.serve import ServeResult, typed_performance
from reprokit.step_kinds.static_smem import StaticSmemResult
from reprokit.step_kinds.tile_sweep import Roofline, SweepResult
from reprokit.step_kinds.triage import TriageResult

DEFAULT_TOLERANCE = 0.05  # a figure 5% worse than A's is a regression
# serving figures compared per concurrency: (key, label, True when higher is better)
SERVE_FIGURES = (("output_throughput_tok_s", "output tok/s", True), ("median_ttft_ms", "TTFT ms", False),
                 ("median_itl_ms", "ITL ms", False), ("median_e2e_latency_ms", "e2e ms", False),
                 ("power_median_w", "median power W", True))

FITS, FAILS, UNSUPPORTED, ABSENT = "fits", "fails", "unsupported", "absent"


@dataclass
class RunView:
    """One record as the comparison reads it."""

    dir: Path
    manifest: Manifest
    verdict: Verdict | None  # None: the run was never judged
    results: dict[str, Result]  # step kind (``uses``) -> that step's result, as its kind's model

    @property
    def word(self) -> str | None:
        return self.verdict.verdict if self.verdict else None

    def summary(self) -> dict[str, Any]:
        return {"run_id": self.manifest.run_id, "dir": str(self.dir), "kit": self.manifest.kit_name,
                "host": self.manifest.host_name, "status": self.manifest.status, "verdict": self.word}


def load_run(path: Path) -> RunView:
    """A run record, or a ConfigError naming the path that is not one."""
    if not path.is_dir():
        what = "a file, not a directory" if path.exists() else "no such directory"
        raise ConfigError(f"{path}: not a run record ({what}); pass a record's directory, runs/<id>")
    manifest = load_manifest(path)  # validated: run_id and steps are there
    summary = manifest.verdict
    verdict = load_verdict(path) or (Verdict(summary.verdict, summary.summary) if summary else None)
    results: dict[str, Result] = {}
    for step in manifest.steps:
        if step.result_file and step.uses not in results:
            result = _typed(step.uses, _read_json(path / step.result_file))
            if result is not None:
                results[step.uses] = result
    return RunView(path, manifest, verdict, results)


def _typed(uses: str, data: Any) -> Result | None:
    """A result as its kind's model; one that does not match it is the step's error, not compared."""
    kind = STEP_KINDS.get(uses)
    if kind is None or not isinstance(data, dict):
        return None
    try:
        return kind.read_result(data, uses)
    except ResultError:
        return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def compare_runs(run_a: Path, run_b: Path, tolerance: float = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """The differences between two records, as JSON-able data (ratios are B/A); ``regressions`` beyond ``tolerance``."""
    a, b = load_run(Path(run_a)), load_run(Path(run_b))
    notes = []
    sections = {}
    for uses, key, compare in (("static-smem", "static_smem", _static_smem), ("tile-sweep", "sweep", _sweep),
                               ("triage", "triage", _triage)):
        ra, rb = a.results.get(uses), b.results.get(uses)
        if ra is not None and rb is not None:
            sections[key] = compare(ra, rb)
        else:
            sections[key] = None
            if ra is not None or rb is not None:
                notes.append(f"step '{uses}' has a result only in {'A' if ra is not None else 'B'}; not compared")
    if a.manifest.kit_name != b.manifest.kit_name:
        notes.append("the runs are of different kits; expectations are matched by name")
    expectations, unchanged = _expectations(a.verdict, b.verdict)
    serve = _serve(a.results.get("serve"), b.results.get("serve"), tolerance)
    regressions = _regressions(expectations, sections.get("sweep"), serve, tolerance)
    return {
        "a": a.summary(),
        "b": b.summary(),
        "verdict": {"a": a.word, "b": b.word, "changed": a.word != b.word},
        "environment": _differing(environment(a.manifest), environment(b.manifest)),
        "pins": _differing(a.manifest.pins or {}, b.manifest.pins or {}),
        "installed": _differing((a.manifest.fingerprint or Fingerprint()).packages,
                                (b.manifest.fingerprint or Fingerprint()).packages),
        "expectations": expectations,
        "expectations_unchanged": unchanged,
        **sections,
        "serve": serve,
        "tolerance": tolerance,
        "regressions": regressions,
        "notes": notes,
    }


def environment(manifest: Manifest) -> dict[str, Any]:
    """What a run ran on, flattened for comparison: host, GPUs, driver, CUDA, nvcc, each image's reference and digest."""
    fp = manifest.fingerprint or Fingerprint()
    host = manifest.host or {}
    devices = fp.devices
    driver = fp.driver or Driver()
    env: dict[str, Any] = {
        "host": f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})",
        "GPUs": ", ".join(sorted({f"{sum(1 for e in devices if e.name == d.name)} x {d.name} ({d.gpu_arch})"
                                  for d in devices})) or f"none ({fp.gpu_reason or 'no GPU'})",
        "driver": driver.driver_release,
        "CUDA driver API": driver.cuda_driver_api,
        "nvcc": fp.nvcc,
        "opt-in smem/block (B)": ", ".join(sorted({str(d.max_shared_memory_per_block_optin_bytes) for d in devices})) or None,
        "git commit": (manifest.source or {}).get("git_commit"),
    }
    for name, image in sorted((manifest.images or {}).items()):
        env[f"image {name}"] = image.get("digest") or image.get("ref") or image.get("note")
    return env


def _serve(a: ServeResult | None, b: ServeResult | None, tolerance: float) -> dict[str, Any] | None:
    """Serving figures of both runs per concurrency, B/A, and whether B is worse than A beyond the tolerance."""
    perf_a, perf_b = typed_performance(a), typed_performance(b)
    if perf_a is None or perf_b is None:
        return None
    rows_a, rows_b = perf_a.by_concurrency or {}, perf_b.by_concurrency or {}
    figures = []
    for key in [k for k in rows_a if k in rows_b]:
        for figure, label, higher_is_better in SERVE_FIGURES:
            va, vb = getattr(rows_a[key], figure), getattr(rows_b[key], figure)
            ratio = _ratio(va, vb)
            worse = ratio is not None and (ratio < 1 - tolerance if higher_is_better else ratio > 1 + tolerance)
            if figure == "power_median_w":
                worse = False  # power is context (fed or underfed GPUs), not better or worse by itself
            figures.append({"concurrency": rows_a[key].concurrency, "figure": label, "a": va, "b": vb,
                            "ratio": ratio, "regression": worse})
    ready = {"a": perf_a.ready_after_s, "b": perf_b.ready_after_s, "ratio": _ratio(perf_a.ready_after_s, perf_b.ready_after_s)}
    ready["regression"] = ready["ratio"] is not None and ready["ratio"] > 1 + tolerance
    return {"ready_after_s": ready, "figures": figures}


def _regressions(expectations: list[dict[str, Any]], sweep: dict[str, Any] | None, serve: dict[str, Any] | None,
                 tolerance: float) -> list[str]:
    """Every way B is worse than A: an expectation that held and now fails, a figure past the tolerance."""
    out = [f"expectation {e['name']}: {e['a']} -> {e['b']}" for e in expectations if e["a"] == Word.PASS and e["b"] == Word.FAIL]
    for problem in (sweep or {}).get("problems") or []:
        ratio = problem.get("time_ratio")
        if is_number(ratio) and ratio > 1 + tolerance:
            out.append(f"sweep {problem['problem']}: best tile {ratio:.2f}x the time of A")
    if serve:
        if serve["ready_after_s"]["regression"]:
            out.append(f"serve: ready after {serve['ready_after_s']['b']} s, A {serve['ready_after_s']['a']} s")
        for row in serve["figures"]:
            if row["regression"]:
                out.append(f"serve c{row['concurrency']} {row['figure']}: {_fmt(row['a'], 4)} -> {_fmt(row['b'], 4)} "
                           f"(x{row['ratio']:.2f})")
    return out


def _differing(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: {"a": a.get(name), "b": b.get(name)} for name in sorted({*a, *b}) if a.get(name) != b.get(name)}


def _expectations(a: Verdict | None, b: Verdict | None) -> tuple[list[dict[str, Any]], int]:
    status_a = {j.name: j.status for j in (a.expectations if a else [])}
    status_b = {j.name: j.status for j in (b.expectations if b else [])}
    names = list(status_a) + [n for n in status_b if n not in status_a]
    changed = [{"name": n, "a": status_a.get(n), "b": status_b.get(n)} for n in names if status_a.get(n) != status_b.get(n)]
    return changed, len(names) - len(changed)


def _tiles_by_status(result: StaticSmemResult) -> tuple[tuple[str, list[str]], ...]:
    return ((FAILS, result.failing_tiles or []), (FITS, result.fitting_tiles or []),
            (UNSUPPORTED, result.unsupported_tiles or []))


def tile_status(result: StaticSmemResult, tile: str) -> str:
    return next((status for status, tiles in _tiles_by_status(result) if tile in tiles), ABSENT)


def _static_smem(a: StaticSmemResult, b: StaticSmemResult) -> dict[str, Any]:
    tiles = []
    for result in (a, b):
        for _, listed in _tiles_by_status(result):
            tiles += [t for t in listed if t not in tiles]
    changed = {t: {"a": tile_status(a, t), "b": tile_status(b, t)} for t in tiles if tile_status(a, t) != tile_status(b, t)}
    return {
        "a": {"flashinfer": a.flashinfer, "arch": a.arch, "capacity_bytes": a.capacity_bytes},
        "b": {"flashinfer": b.flashinfer, "arch": b.arch, "capacity_bytes": b.capacity_bytes},
        "newly_fit": [t for t, s in changed.items() if s["a"] == FAILS and s["b"] == FITS],
        "newly_fail": [t for t, s in changed.items() if s["b"] == FAILS],
        "tiles": changed,
    }


def _ratio(a: Any, b: Any) -> float | None:
    return b / a if is_number(a) and is_number(b) and a != 0 else None


def _sweep(a: SweepResult, b: SweepResult) -> dict[str, Any]:
    ceilings = {}
    for key in ("copy_gbps", "dense_gemm_tflops"):
        va, vb = getattr(a.roofline or Roofline(), key), getattr(b.roofline or Roofline(), key)
        ceilings[key] = {"a": va, "b": vb, "ratio": _ratio(va, vb)}
    best_a = {e.problem: e for e in a.best or [] if "problem" in e.model_fields_set}
    best_b = {e.problem: e for e in b.best or [] if "problem" in e.model_fields_set}
    problems = []
    for name in [p for p in best_a if p in best_b]:
        ea, eb = best_a[name], best_b[name]
        problems.append({
            "problem": name, "phase": ea.phase or eb.phase,
            "config_a": ea.config, "config_b": eb.config,
            "time_a_s": ea.time_median_s, "time_b_s": eb.time_median_s,
            "time_ratio": _ratio(ea.time_median_s, eb.time_median_s),
            "fraction_a": ea.fraction_of_roofline, "fraction_b": eb.fraction_of_roofline,
            "fraction_ratio": _ratio(ea.fraction_of_roofline, eb.fraction_of_roofline),
        })
    return {"ceilings": ceilings, "problems": problems,
            "only_in_a": [p for p in best_a if p not in best_b], "only_in_b": [p for p in best_b if p not in best_a]}


def _failures_by_tile(result: TriageResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in result.autotune_failures or []:
        if is_number(row.count):
            tile = str(row.tile or "unknown tile")
            counts[tile] = counts.get(tile, 0) + row.count
    return counts


def _triage(a: TriageResult, b: TriageResult) -> dict[str, Any]:
    tiles_a, tiles_b = _failures_by_tile(a), _failures_by_tile(b)
    total_a, total_b = sum(tiles_a.values()), sum(tiles_b.values())
    return {
        "verdict": {"a": a.verdict, "b": b.verdict, "changed": a.verdict != b.verdict},
        "ready": {"a": a.ready, "b": b.ready},
        "failures": {"a": total_a, "b": total_b, "delta": total_b - total_a},
        "failures_by_tile": {t: {"a": tiles_a.get(t, 0), "b": tiles_b.get(t, 0), "delta": tiles_b.get(t, 0) - tiles_a.get(t, 0)}
                             for t in sorted({*tiles_a, *tiles_b})},
    }


# -- text ----------------------------------------------------------------------------------------

def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def _us(seconds: Any) -> str:
    return f"{seconds * 1e6:.1f}" if is_number(seconds) else "-"


def render_markdown(diff: dict[str, Any]) -> str:
    a, b = diff["a"], diff["b"]
    verdict = diff["verdict"]
    lines = [
        f"# Compare: {a['run_id']} (A) vs {b['run_id']} (B)",
        "",
        f"- A: {a['kit']} on {a['host']}, {a['status']}, verdict {a['verdict']}",
        f"- B: {b['kit']} on {b['host']}, {b['status']}, verdict {b['verdict']}",
        "",
        f"**Verdict**: {verdict['a']} -> {verdict['b']}" + (" (changed)" if verdict["changed"] else " (unchanged)"),
        "",
    ]
    regressions = diff.get("regressions") or []
    lines += [f"**Regressions** (worse than A by more than {diff.get('tolerance', DEFAULT_TOLERANCE):.0%}): "
              + (f"{len(regressions)}" if regressions else "none"), ""]
    lines += [f"- {r}" for r in regressions] + ([""] if regressions else [])
    if diff.get("environment"):
        lines += ["## Environment that differs", ""] + _table(["", "A", "B"], [[n, v["a"], v["b"]] for n, v in diff["environment"].items()]) + [""]
    else:
        lines += ["Environment: identical (host, GPUs, driver, CUDA, nvcc, images, git commit).", ""]
    for title, key in (("Pins that differ", "pins"), ("Host packages that differ", "installed")):
        if diff[key]:
            lines += [f"## {title}", ""] + _table(["package", "A", "B"], [[n, v["a"], v["b"]] for n, v in diff[key].items()]) + [""]
    if not diff["pins"]:
        lines += ["Pins: identical.", ""]
    lines += [f"## Expectations ({len(diff['expectations'])} changed, {diff['expectations_unchanged']} unchanged)", ""]
    if diff["expectations"]:
        lines += _table(["expectation", "A", "B"], [[e["name"], e["a"] or "(absent)", e["b"] or "(absent)"] for e in diff["expectations"]])
        lines.append("")
    smem = diff.get("static_smem")
    if smem:
        lines += ["## Static shared memory", "",
                  f"A: flashinfer {smem['a']['flashinfer']} on {smem['a']['arch']}; B: flashinfer {smem['b']['flashinfer']} on {smem['b']['arch']}.",
                  f"Newly fit: {', '.join(smem['newly_fit']) or 'none'}. Newly fail: {', '.join(smem['newly_fail']) or 'none'}.", ""]
        if smem["tiles"]:
            lines += _table(["tile", "A", "B"], [[t, s["a"], s["b"]] for t, s in smem["tiles"].items()]) + [""]
    sweep = diff.get("sweep")
    if sweep:
        lines += ["## Tile sweep (ratios B/A)", ""]
        lines += _table(["ceiling", "A", "B", "B/A"], [[k, _fmt(v["a"], 4), _fmt(v["b"], 4), _fmt(v["ratio"])]
                                                     for k, v in sweep["ceilings"].items()]) + [""]
        if sweep["problems"]:
            lines += _table(["problem", "best A", "best B", "time A (us)", "time B (us)", "time B/A", "of roofline A",
                             "of roofline B", "roofline B/A"],
                            [[p["problem"], p["config_a"], p["config_b"], _us(p["time_a_s"]), _us(p["time_b_s"]),
                              _fmt(p["time_ratio"]), _fmt(p["fraction_a"]), _fmt(p["fraction_b"]), _fmt(p["fraction_ratio"])]
                             for p in sweep["problems"]]) + [""]
        for side in ("a", "b"):
            if sweep[f"only_in_{side}"]:
                lines += [f"Only in {side.upper()}: {', '.join(sweep[f'only_in_{side}'])}.", ""]
    triage = diff.get("triage")
    if triage:
        tv, failures = triage["verdict"], triage["failures"]
        lines += ["## Triage", "",
                  f"Verdict {tv['a']} -> {tv['b']}" + (" (changed)" if tv["changed"] else " (unchanged)")
                  + f"; autotune failures {failures['a']} -> {failures['b']} ({failures['delta']:+d}).", ""]
        if triage["failures_by_tile"]:
            lines += _table(["tile", "A", "B", "delta"], [[t, v["a"], v["b"], f"{v['delta']:+d}"]
                                                          for t, v in triage["failures_by_tile"].items()]) + [""]
    serve = diff.get("serve")
    if serve:
        ready = serve["ready_after_s"]
        lines += ["## Serving (ratios B/A)", "", f"Ready after {_fmt(ready['a'], 4)} s -> {_fmt(ready['b'], 4)} s"
                  + (" (regression)" if ready["regression"] else "") + ".", ""]
        if serve["figures"]:
            lines += _table(["concurrency", "figure", "A", "B", "B/A", ""],
                            [[r["concurrency"], r["figure"], _fmt(r["a"], 4), _fmt(r["b"], 4), _fmt(r["ratio"]),
                              "REGRESSION" if r["regression"] else ""] for r in serve["figures"]]) + [""]
    for note in diff["notes"]:
        lines.append(f"> {note}")
    return "\n".join(lines).rstrip() + "\n"
