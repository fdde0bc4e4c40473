"""The fit table: the static shared-memory analysis over every FlashInfer release and arch, as data.

One cell per (release, arch, dtype): the tactics FlashInfer's autotuner would try, which of them cannot start
(``SharedStorage`` over the arch's capacity), their tiles and bytes, and the tactics the dispatcher rejects
(``Unsupported tile shape config``). A release the analysis cannot read gets its reason in its cell, never a
silent gap. Cells are computed in this process by the static-smem workload (``workload.run``), which caches
per wheel sha256, so a second generation compiles nothing. The table is written after every cell (atomically),
so an interrupted generation keeps what it finished and resumes from there.

    invoke fit-table [--versions 0.6.3,0.6.15] [--arch sm120,sm90] [--dtype nvfp4] [--refresh]

``invoke bisect`` and ``invoke fix`` read the table (``load`` / ``cell``) before they compile anything.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from packaging.version import Version

from reprokit.hosts.here import run_here
from reprokit.output.say import Say, silent
from reprokit.workloads.contract import write_json_atomic
from reprokit.workloads.facts.exits import StepStatus
from reprokit.workloads.facts.smem_fit import KernelFit

WORKLOAD = "reprokit.workloads.static_smem"

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "fit-table.json"
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "fit-table.md"
OLDEST = "0.5.0"
# (arch, dtype) of the table: NVFP4 everywhere (none on sm90, said in one line), and what Hopper does run.
TABLE_CELLS = (("sm120", "nvfp4"), ("sm121", "nvfp4"), ("sm90", "nvfp4"), ("sm90", "fp8"), ("sm90", "bf16"),
               ("sm100", "nvfp4"))
TABLE_ARCHES = tuple(dict.fromkeys(arch for arch, _ in TABLE_CELLS))  # the table's columns, in its order
OUTPUT_DTYPE = "bf16"  # the kits' models serve bf16; f16 kernels have the same tiles (docs/static-smem.md)
SCHEMA = 1


def table_releases(available: list[str], oldest: str = OLDEST) -> list[str]:
    """Final releases from ``oldest`` on, oldest first; ``.postN`` rebuilds, pre- and dev releases left out."""
    chosen = {Version(v) for v in available}
    return [str(v) for v in sorted(chosen) if v >= Version(oldest) and not (v.is_prerelease or v.is_devrelease
                                                                              or v.is_postrelease)]


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The cell of one workload result: what fails, by how much, and what the dispatcher rejects."""
    rows = result["rows"]
    failing = [r for r in rows if r["verdict"] == KernelFit.EXCEEDS]
    rejected = [r for r in rows if r["verdict"] == KernelFit.UNSUPPORTED]
    counts = result["tactic_counts"]
    cell: dict[str, Any] = {
        "status": "ok",
        "tactics": sum(counts.values()),
        "tactic_counts": counts,
        "failing_tactics": result["failing_tactics"],
        "failing_tiles": result["failing_tiles"],
        "fitting_tiles": result["fitting_tiles"],
        "dispatch_rejected_tiles": result["unsupported_tiles"],
        "dispatch_rejected_tactics": sorted(r["tactic"] for r in rejected),
        "dispatch_rejected_by_op": {op: sorted(r["tactic"] for r in rejected if r["op"] == op) for op in counts},
        "dispatch_error": rejected[0]["explanation"] if rejected else None,
        "capacity_bytes": result["capacity_bytes"],
        "failing": [{"op": r["op"], "tactic": r["tactic"], "tile": r["tile"], "fusion": r["fusion"],
                     "swap_ab": r["swap_ab"], "kernel_smem_bytes": r["kernel_smem_bytes"],
                     "over_capacity_bytes": r["over_capacity_bytes"], "explanation": r["explanation"]}
                    for r in failing],
        "default_tactics": {op: _row_brief(min((r for r in rows if r["op"] == op), key=lambda r: r["tactic"]))
                            for op in counts if any(r["op"] == op for r in rows)},
        "largest_fitting_bytes": max((r["kernel_smem_bytes"] for r in rows if r["verdict"] == KernelFit.FITS), default=None),
        "cutlass": result["sources"]["cutlass"]["version"],
        "wheel_sha256": result["sources"]["wheel"]["sha256"],
        "flashinfer_git_commit": result["sources"]["flashinfer_git_commit"],
        "notes": result["notes"],
    }
    if not rows:
        cell["status"] = "no_kernels"
        cell["reason"] = (result["notes"] or [f"no {result['dtype']} tactics for {result['arch']}"])[0]
    return cell


def _row_brief(row: dict[str, Any]) -> dict[str, Any]:
    """A tactic in a few fields (the untuned default of an op: the binding's setRunnerProfiles takes the first)."""
    return {k: row.get(k) for k in ("tactic", "tile", "fusion", "swap_ab", "verdict", "kernel_smem_bytes")}


def cell_specs(arches: str, dtypes: str) -> list[tuple[str, str]]:
    """The (arch, dtype) pairs to compute: ``dtypes`` "auto" means the table's own (TABLE_CELLS) for ``arches``."""
    wanted = arches.split(",")
    if dtypes == "auto":
        return [(a, d) for a, d in TABLE_CELLS if a in wanted]
    return [(a, d) for a in wanted for d in dtypes.split(",")]


def compute_cell(version: str, arch: str, dtype: str, cache_dir: Path, jobs: int | None, work_root: Path) -> dict[str, Any]:
    """Analyse one cell; a release the analysis cannot read becomes a cell with status and reason."""
    started = time.monotonic()
    params: dict[str, Any] = {"flashinfer": version, "arch": arch, "dtype": dtype, "output_dtypes": [OUTPUT_DTYPE],
                              "cache_dir": str(cache_dir)}
    if jobs:
        params["jobs"] = jobs
    out_dir = work_root / f"{version}-{arch}-{dtype}"
    ran = run_here(WORKLOAD, params, out_dir, "static-smem")  # as a kit's step runs it: the one executor
    if ran.exit_code == 0 and ran.result is not None and ran.result.get("status") == StepStatus.OK:
        cell = summarize(ran.result)
        shutil.rmtree(out_dir, ignore_errors=True)  # a failed cell keeps its compiler logs there
    else:
        reason = (ran.result or {}).get("error") or ran.result_problem or f"the analysis ended with exit {ran.exit_code}"
        cell = {"status": "unreadable", "reason": reason, "exit_code": ran.exit_code, "work_dir": str(out_dir)}
    cell.update(flashinfer=version, arch=arch, dtype=dtype, elapsed_s=round(time.monotonic() - started, 2))
    return cell


def cell_key(version: str, arch: str, dtype: str) -> str:
    return f"{version}/{arch}/{dtype}"


def load(path: Path = DATA_FILE) -> dict[str, Any]:
    """The table as written by ``generate`` (an empty one when there is none yet)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"schema": SCHEMA, "cells": {}}
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: fit table schema {data.get('schema')!r}, expected {SCHEMA}; regenerate it")
    return data


def write(table: dict[str, Any], path: Path = DATA_FILE) -> None:
    write_json_atomic(path, _sorted(table))
    path.chmod(0o644)  # a data file of the repository, not a private temporary


def cell(version: str, arch: str, dtype: str = "nvfp4", path: Path = DATA_FILE) -> dict[str, Any] | None:
    """One cell of the table, or None when the table does not have it."""
    return load(path)["cells"].get(cell_key(version, arch, dtype))


def generate(versions: list[str], arches: list[str], dtypes: list[str], cache_dir: Path, jobs: int | None,
             path: Path = DATA_FILE, refresh: bool = False, log: Say = silent) -> dict[str, Any]:
    """Fill the table's cells for ``versions`` x ``arches`` x ``dtypes``; cells already there are kept unless ``refresh``."""
    table = load(path)
    timings: list[float] = []
    started = time.monotonic()
    work_root = cache_dir / "fit_table" / "work"
    for dtype in dtypes:
        for arch in arches:
            for version in versions:
                key = cell_key(version, arch, dtype)
                if key in table["cells"] and not refresh and table["cells"][key]["status"] != "unreadable":
                    continue
                found = compute_cell(version, arch, dtype, cache_dir, jobs, work_root)
                timings.append(found["elapsed_s"])
                table["cells"][key] = found
                table["schema"] = SCHEMA
                write(table, path)
                log(f"fit-table: {key}: {found['status']} {_brief(found)} ({found['elapsed_s']:.1f} s)")
    table = _sorted(table)
    table["generation"] = {"cells_computed": len(timings), "computed_s": round(sum(timings), 1),
                           "wall_s": round(time.monotonic() - started, 1)}
    write(table, path)
    return table


def merge(found: list[Path], path: Path = DATA_FILE) -> list[str]:
    """Add the cells of ``found`` (tables written elsewhere, e.g. by a host without the index) to the table at ``path``.

    A cell the table lacks, or has as unreadable, is taken; a readable cell already there is kept (the table is the
    reference, and a cell's inputs are the wheel's own sha256). Returns the keys taken, in table order.
    """
    table = load(path)
    taken: list[str] = []
    for source in found:
        for key, cell in load(source)["cells"].items():
            if key not in table["cells"] or table["cells"][key]["status"] == "unreadable":
                table["cells"][key] = cell
                taken.append(key)
    write(table, path)
    order = list(load(path)["cells"])
    return sorted(set(taken), key=order.index)


def _brief(found: dict[str, Any]) -> str:
    if found["status"] != StepStatus.OK:
        return found.get("reason", "")[:160]
    failing = sum(len(v) for v in found["failing_tactics"].values())
    return f"{failing}/{found['tactics']} failing, tiles {','.join(found['failing_tiles']) or 'none'}"


def _sorted(table: dict[str, Any]) -> dict[str, Any]:
    def order(key: str) -> tuple:
        version, arch, dtype = key.split("/")
        return (dtype, TABLE_ARCHES.index(arch) if arch in TABLE_ARCHES else 99, Version(version))
    return {**table, "cells": {k: table["cells"][k] for k in sorted(table["cells"], key=order)}}


def render_markdown(table: dict[str, Any]) -> str:
    """docs/fit-table.md: per (arch, dtype) one table of releases, failing tactics, tiles, bytes and rejections."""
    cells = table["cells"]
    lines = ["# Fit table: FlashInfer's CUTLASS fused-MoE tactics that cannot start, per release and arch", "",
             "Generated by `invoke fit-table` (data: `reprokit/data/fit-table.json`) from the static shared-memory",
             "analysis (`docs/static-smem.md`) of each release's own wheel, with nvcc and no GPU. A tactic fails when its",
             "kernel's `sizeof(SharedStorage)` exceeds the arch's capacity (CUTLASS's constant: 101376 B on sm120/sm121,",
             "232448 B on sm90/sm100). Tactic numbers are the autotuner's (gemm1 first, then gemm2); "
             f"output type {OUTPUT_DTYPE}.", "",
             "`invoke fit-table --new` reads the package index's release list (Simple API) and computes only the cells",
             "the table lacks, post-releases included; the weekly workflow `.github/workflows/fit-table.yml` runs it with",
             "`--check`, which fails with the diff when a release adds or changes a cell. For a many-core host without the",
             "index, `python -m reprokit.commands.fit_table --missing TODO.json` writes the cells the table lacks, and",
             "`--merge CELLS_JSON` takes back what it computed (`evidence/fit-table-cells/`).", ""]
    generation = table.get("generation")
    if generation:
        lines += ["Last generation: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in generation.items()
                                                 if not isinstance(v, (list, dict))) + ".", ""]
    pairs = sorted({(c["arch"], c["dtype"]) for c in cells.values()},
                   key=lambda p: (TABLE_CELLS.index(p) if p in TABLE_CELLS else 99, p))
    for arch, dtype in pairs:
        group = [c for c in cells.values() if c["arch"] == arch and c["dtype"] == dtype]
        group.sort(key=lambda c: Version(c["flashinfer"]))
        lines.append(f"## {arch}, {dtype}")
        lines.append("")
        readable = [c for c in group if c["status"] != "unreadable"]
        if readable and all(c["status"] == "no_kernels" for c in readable):
            lines += [f"No {dtype} kernels on {arch} in any of the {len(readable)} readable releases "
                      f"({readable[0]['flashinfer']}-{readable[-1]['flashinfer']}): {readable[0]['reason']}.", ""]
            group = [c for c in group if c["status"] == "unreadable"]
            if not group:
                continue
        lines += ["| release | tactics (gemm1+gemm2) | failing tactics | failing tiles | SharedStorage of the failing | "
                  "dispatcher rejects | untuned default (gemm1 / gemm2) | CUTLASS |",
                  "|---|---|---|---|---|---|---|---|"]
        for c in group:
            if c["status"] == "unreadable":
                reason = c["reason"].replace("|", "/")
                reason = reason if len(reason) <= 200 else reason[:200] + "..."
                lines.append(f"| {c['flashinfer']} | unreadable: {reason} | | | | | | |")
                continue
            if c["status"] == "no_kernels":
                lines.append(f"| {c['flashinfer']} | none: {c['reason']} | | | | | | {c.get('cutlass', '')} |")
                continue
            counts = "+".join(str(v) for v in c["tactic_counts"].values())
            failing = "; ".join(f"{op.rsplit('::', 1)[-1]} {', '.join(map(str, t))}"
                                for op, t in c["failing_tactics"].items() if t) or "none"
            sizes = ", ".join(sorted({f"{f['kernel_smem_bytes']} B (+{f['over_capacity_bytes']})" for f in c["failing"]})) or "-"
            rejected = (f"{len(c['dispatch_rejected_tactics'])}: {', '.join(c['dispatch_rejected_tiles'])}"
                        if c["dispatch_rejected_tactics"] else "-")
            defaults = " / ".join(f"{d['tactic']} {d['tile']} {d['verdict']}" for d in c.get("default_tactics", {}).values())
            lines.append(f"| {c['flashinfer']} | {counts} | {failing} | {', '.join(c['failing_tiles']) or 'none'} | "
                         f"{sizes} | {rejected} | {defaults or '-'} | {c.get('cutlass', '')} |")
        lines.append("")
    return "\n".join(lines) + "\n"
