"""The fit table's missing cells on a many-core host without the package index: a pool of workers over families.

A family is one release with its post-releases, for one (arch, dtype): its cells run in one worker, one after the
other, so the later ones find the first one's objects in the shared cache (byte-identical sources). Each worker
writes its own table (``fit_table.generate`` writes after every cell), so a deadline keeps every finished cell;
they are put together at the end, and ``merge`` adds them to the repository's table. Run by ``job.sh``; the sources
come from a bundle (``source_bundle unpack``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
import time
from pathlib import Path

from reprokit.fix import fit_table
from reprokit.workloads.static_smem import wheel


def families(todo: list[tuple[str, str, str]]) -> list[list[tuple[str, str, str]]]:
    """Cells grouped by (base release, arch, dtype), the groups of most cells first."""
    groups: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    for version, arch, dtype in todo:
        groups.setdefault((re.sub(r"\.post\d+$", "", version), arch, dtype), []).append((version, arch, dtype))
    return sorted(groups.values(), key=lambda cells: (-len(cells), cells[0][1], cells[0][0]))


def work(args: tuple[int, list[list[tuple[str, str, str]]], str, int]) -> None:
    index, assigned, out_dir, jobs = args
    table = Path(out_dir) / f"worker-{index}.json"
    for family in assigned:
        for version, arch, dtype in family:
            fit_table.generate([version], [arch], [dtype], wheel.default_cache_dir(), jobs, table,
                               log=lambda line: print(f"[w{index}] {line}", file=sys.stderr, flush=True))


def merge(found: list[Path], generation: dict) -> int:
    """Add the cells of ``found`` (``cells.json`` files) to the repository's table; returns how many were new."""
    table = fit_table.load()
    before = len(table["cells"])
    for path in found:
        for key, cell in fit_table.load(path)["cells"].items():
            if key not in table["cells"] or table["cells"][key]["status"] == "unreadable":
                table["cells"][key] = cell
    table["generation"] = generation
    fit_table.write(table)
    return len(table["cells"]) - before


def main() -> int:
    if sys.argv[1:2] == ["merge"]:  # merge GENERATION_JSON CELLS_JSON...
        added = merge([Path(p) for p in sys.argv[3:]], json.loads(sys.argv[2]))
        print(f"fit table: {added} cells added, {len(fit_table.load()['cells'])} in {fit_table.DATA_FILE}")
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--todo", type=Path, required=True, help="JSON list of [version, arch, dtype]")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--deadline-s", type=float, required=True)
    args = parser.parse_args()
    todo = [tuple(c) for c in json.loads(args.todo.read_text())]
    groups = families(todo)  # type: ignore[arg-type]
    # round-robin by size, so each worker starts on a big family
    assigned: list[list[list[tuple[str, str, str]]]] = [[] for _ in range(args.workers)]
    for n, group in enumerate(groups):
        assigned[n % args.workers].append(group)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    processes = []
    for index, chunk in enumerate(assigned):
        p = multiprocessing.Process(target=work, args=((index, chunk, str(args.out_dir), args.jobs),))
        p.start()
        processes.append(p)
    for p in processes:
        p.join(max(0.0, args.deadline_s - (time.monotonic() - started)))
    for p in processes:
        if p.is_alive():
            p.kill()  # its table holds every cell it finished (written after each)
    merged: dict[str, dict] = {}
    for path in sorted(args.out_dir.glob("worker-*.json")):
        merged.update(fit_table.load(path)["cells"])
    print(json.dumps({"cells_done": len(merged), "cells_asked": len(todo),
                      "wall_s": round(time.monotonic() - started, 1)}), file=sys.stderr)
    (args.out_dir / "cells.json").write_text(json.dumps({"schema": fit_table.SCHEMA, "cells": merged}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
