"""``python -m reprokit.workloads.tilelang_smem --params P.json --out-dir DIR``."""

import sys

from reprokit.workloads.contract import main
from reprokit.workloads.tilelang_smem.workload import run

if __name__ == "__main__":
    sys.exit(main("tilelang-smem", run))
