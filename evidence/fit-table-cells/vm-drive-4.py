"""The fourth round's worker on the 2-core VM: one ordered list of cells, the table written after each cell.

    PYTHONPATH=CHECKOUT nice -n 19 python vm-drive-4.py NAME JOBS   # reads NAME-todo.json, writes NAME.json

Two ran at once (a: sm90 FP8 and BF16 in release order, each release's FP8 before its BF16, so a release's objects
serve the next; b: the NVFP4 post-releases, sm120 and sm121 first), then c (the two cells b could not read).
"""
import json
import sys
import time
from pathlib import Path

from reprokit.fix import fit_table
from reprokit.workloads.static_smem import wheel

name, jobs = sys.argv[1], int(sys.argv[2])
todo = json.loads(Path(f"{name}-todo.json").read_text())
table = Path(f"{name}.json")
for version, arch, dtype in todo:
    started = time.time()
    fit_table.generate([version], [arch], [dtype], wheel.default_cache_dir(), jobs, table,
                       log=lambda line: print(f"[{name}] {line}", file=sys.stderr, flush=True))
    print(f"[{name}] CELL {version}/{arch}/{dtype} {time.time() - started:.0f}s {time.strftime('%H:%M:%S')}",
          file=sys.stderr, flush=True)
