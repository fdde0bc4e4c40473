"""``python -m reprokit.workloads.triton_moe_configs --params P.json --out-dir DIR``."""

import sys

from reprokit.workloads.contract import main
from reprokit.workloads.triton_moe_configs.workload import run

if __name__ == "__main__":
    sys.exit(main("triton-moe-configs", run))
