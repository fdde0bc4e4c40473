"""``python -m reprokit.workloads.cute_dsl_smem --params P.json --out-dir DIR``."""

import sys

from reprokit.workloads.contract import main
from reprokit.workloads.cute_dsl_smem.workload import run

if __name__ == "__main__":
    sys.exit(main("cute-dsl-smem", run))
