"""``invoke compare RUN_A RUN_B``: what changed from one run record to another.

Typically two runs of a kit with different FlashInfer pins, or one kit on two
hosts. Read only from the records (manifest, ``verdict.json``, each step's
``result.json``): which pins differ, whether the verdict and each expectation
changed, which tiles newly fit or newly fail the shared-memory analysis, how
the sweep's best tiles moved (ratios B/A), and how the triage changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError, ExitCode
from reprokit.records.run import MANIFEST, load_manifest
from reprokit.report.markdown import _table
from reprokit.report.svg import is_number

FITS, FAILS, UNSUPPORTED, ABSENT = "fits", "fails", "unsupported", "absent"


@dataclass
class RunView:
    """One record as the comparison reads it."""

    dir: Path
    manifest: dict[str, Any]
    verdict: dict[str, Any]
    results: dict[str, dict[str, Any]]  # step kind (``uses``) -> that step's result.json

    def summary(self) -> dict[str, Any]:
        return {"run_id": self.manifest.get("run_id"), "dir": str(self.dir),
                "kit": (self.manifest.get("kit") or {}).get("name"), "host": (self.manifest.get("host") or {}).get("name"),
                "status": self.manifest.get("status"), "verdict": self.verdict.get("verdict")}


def load_run(path: Path) -> RunView:
    """A run record, or a ConfigError naming the path that is not one."""
    if not path.is_dir():
        what = "a file, not a directory" if path.exists() else "no such directory"
        raise ConfigError(f"{path}: not a run record ({what}); pass a record's directory, runs/<id>")
    manifest = load_manifest(path)
    if not isinstance(manifest, dict) or "run_id" not in manifest or not isinstance(manifest.get("steps"), list):
        raise ConfigError(f"{path / MANIFEST}: not a reprokit run manifest (no run_id or steps)")
    verdict = _read_json(path / "verdict.json") or manifest.get("verdict") or {}
    results: dict[str, dict[str, Any]] = {}
    for step in manifest["steps"]:
        uses, result_file = step.get("uses"), step.get("result_file")
        if uses and result_file and uses not in results:
            result = _read_json(path / result_file)
            if isinstance(result, dict):
                results[uses] = result
    return RunView(path, manifest, verdict, results)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def compare_runs(run_a: Path, run_b: Path) -> dict[str, Any]:
    """The differences between two records, as JSON-able data (ratios are B/A)."""
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
    if a.manifest.get("kit", {}).get("name") != b.manifest.get("kit", {}).get("name"):
        notes.append("the runs are of different kits; expectations are matched by name")
    expectations, unchanged = _expectations(a.verdict, b.verdict)
    return {
        "a": a.summary(),
        "b": b.summary(),
        "verdict": {"a": a.verdict.get("verdict"), "b": b.verdict.get("verdict"),
                    "changed": a.verdict.get("verdict") != b.verdict.get("verdict")},
        "pins": _differing(a.manifest.get("pins") or {}, b.manifest.get("pins") or {}),
        "installed": _differing((a.manifest.get("fingerprint") or {}).get("packages") or {},
                                (b.manifest.get("fingerprint") or {}).get("packages") or {}),
        "expectations": expectations,
        "expectations_unchanged": unchanged,
        **sections,
        "notes": notes,
    }


def _differing(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: {"a": a.get(name), "b": b.get(name)} for name in sorted({*a, *b}) if a.get(name) != b.get(name)}


def _expectations(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    status_a = {j["name"]: j.get("status") for j in a.get("expectations") or [] if isinstance(j, dict) and "name" in j}
    status_b = {j["name"]: j.get("status") for j in b.get("expectations") or [] if isinstance(j, dict) and "name" in j}
    names = list(status_a) + [n for n in status_b if n not in status_a]
    changed = [{"name": n, "a": status_a.get(n), "b": status_b.get(n)} for n in names if status_a.get(n) != status_b.get(n)]
    return changed, len(names) - len(changed)


def tile_status(result: dict[str, Any], tile: str) -> str:
    for key, status in (("failing_tiles", FAILS), ("fitting_tiles", FITS), ("unsupported_tiles", UNSUPPORTED)):
        if tile in (result.get(key) or []):
            return status
    return ABSENT


def _static_smem(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    tiles = []
    for result in (a, b):
        for key in ("failing_tiles", "fitting_tiles", "unsupported_tiles"):
            tiles += [t for t in result.get(key) or [] if t not in tiles]
    changed = {t: {"a": tile_status(a, t), "b": tile_status(b, t)} for t in tiles if tile_status(a, t) != tile_status(b, t)}
    return {
        "a": {k: a.get(k) for k in ("flashinfer", "arch", "capacity_bytes")},
        "b": {k: b.get(k) for k in ("flashinfer", "arch", "capacity_bytes")},
        "newly_fit": [t for t, s in changed.items() if s["a"] == FAILS and s["b"] == FITS],
        "newly_fail": [t for t, s in changed.items() if s["b"] == FAILS],
        "tiles": changed,
    }


def _ratio(a: Any, b: Any) -> float | None:
    return b / a if is_number(a) and is_number(b) and a != 0 else None


def _sweep(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    ceilings = {}
    for key in ("copy_gbps", "dense_gemm_tflops"):
        va, vb = (a.get("roofline") or {}).get(key), (b.get("roofline") or {}).get(key)
        ceilings[key] = {"a": va, "b": vb, "ratio": _ratio(va, vb)}
    best_a = {e["problem"]: e for e in a.get("best") or [] if isinstance(e, dict) and "problem" in e}
    best_b = {e["problem"]: e for e in b.get("best") or [] if isinstance(e, dict) and "problem" in e}
    problems = []
    for name in [p for p in best_a if p in best_b]:
        ea, eb = best_a[name], best_b[name]
        problems.append({
            "problem": name, "phase": ea.get("phase") or eb.get("phase"),
            "config_a": ea.get("config"), "config_b": eb.get("config"),
            "time_a_s": ea.get("time_median_s"), "time_b_s": eb.get("time_median_s"),
            "time_ratio": _ratio(ea.get("time_median_s"), eb.get("time_median_s")),
            "fraction_a": ea.get("fraction_of_roofline"), "fraction_b": eb.get("fraction_of_roofline"),
            "fraction_ratio": _ratio(ea.get("fraction_of_roofline"), eb.get("fraction_of_roofline")),
        })
    return {"ceilings": ceilings, "problems": problems,
            "only_in_a": [p for p in best_a if p not in best_b], "only_in_b": [p for p in best_b if p not in best_a]}


def _failures_by_tile(result: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in result.get("autotune_failures") or []:
        if isinstance(row, dict) and is_number(row.get("count")):
            tile = str(row.get("tile") or "unknown tile")
            counts[tile] = counts.get(tile, 0) + row["count"]
    return counts


def _triage(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    tiles_a, tiles_b = _failures_by_tile(a), _failures_by_tile(b)
    total_a, total_b = sum(tiles_a.values()), sum(tiles_b.values())
    return {
        "verdict": {"a": a.get("verdict"), "b": b.get("verdict"), "changed": a.get("verdict") != b.get("verdict")},
        "ready": {"a": a.get("ready"), "b": b.get("ready")},
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
    for note in diff["notes"]:
        lines.append(f"> {note}")
    return "\n".join(lines).rstrip() + "\n"


def compare_cli(run_a: str, run_b: str, as_json: bool) -> int:
    """Print the comparison (markdown, or JSON with ``as_json``); 0 when both are run records."""
    diff = compare_runs(Path(run_a), Path(run_b))
    print(json.dumps(diff, indent=2) if as_json else render_markdown(diff), end="" if not as_json else "\n")
    return ExitCode.PASS
