"""Benchmark of the fit table: cold (an empty cache) and warm (every cell again from the cache).

Cold: ``--cache`` names an empty directory (default: a new temporary one), so every wheel is downloaded and
every probe compiled, cell by cell, each (arch, dtype) in turn as ``invoke fit-table`` does. Warm: the same
cells again with ``--refresh``, answered from the cache (no nvcc, no network). Each is a fresh
``python -m reprokit.commands.fit_table`` process; wall time and the cells' own times are printed.

    .venv/bin/python benchmarks/fit_table_bench.py [--versions 0.6.3,0.6.18] [--arch sm120] [--cache DIR] [--warm-only]

On this project's 2-core VM the full table (27 releases, 6 (arch, dtype) pairs) takes over an hour cold;
``--warm-only --cache DIR`` times the warm pass of a cache filled earlier.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def generate(cache: Path, out: Path, versions: str | None, arch: str, dtype: str, refresh: bool) -> dict:
    env = dict(os.environ, REPROKIT_CACHE=str(cache))
    started = time.monotonic()
    for pair in _pairs(arch, dtype):
        command = [sys.executable, "-m", "reprokit.commands.fit_table", "--arch", pair[0], "--dtype", pair[1], "--out", str(out)]
        if versions:
            command += ["--versions", versions]
        if refresh:
            command.append("--refresh")
        subprocess.run(command, cwd=REPO, env=env, check=True, stderr=subprocess.DEVNULL)
    wall_s = time.monotonic() - started
    table = json.loads(out.read_text())
    return {"wall_s": round(wall_s, 1), "cells": len(table["cells"]),
            "cells_s": round(sum(c["elapsed_s"] for c in table["cells"].values()), 1)}


def _pairs(arch: str, dtype: str) -> list[tuple[str, str]]:
    sys.path.insert(0, str(REPO))
    from reprokit.fix.fit_table import cell_specs

    return cell_specs(arch, dtype)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", help="comma-separated releases (default: every final release from 0.5.0)")
    parser.add_argument("--arch", default="sm120,sm121,sm90,sm100")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--cache", type=Path, help="cache directory (default: a new, empty one: a cold run)")
    parser.add_argument("--warm-only", action="store_true", help="only the warm pass (the cache must be filled)")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="reprokit-fit-bench-"))
    out = cache / "fit-table-bench.json"
    figures = {}
    if not args.warm_only:
        figures["cold"] = generate(cache, out, args.versions, args.arch, args.dtype, refresh=False)
        print(f"cold: {figures['cold']}", flush=True)
    figures["warm"] = generate(cache, out, args.versions, args.arch, args.dtype, refresh=True)
    print(f"warm: {figures['warm']}")
    print(json.dumps({"cache": str(cache), **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
