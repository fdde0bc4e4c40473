"""``python -m reprokit.workloads.cutlass_tile_list --params P.json --out-dir DIR``."""

import sys

from reprokit.workloads.contract import main
from reprokit.workloads.cutlass_tile_list.workload import run

if __name__ == "__main__":
    sys.exit(main("cutlass-tile-list", run))
