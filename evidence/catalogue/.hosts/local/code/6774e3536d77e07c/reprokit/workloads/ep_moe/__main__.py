"""``python -m reprokit.workloads.ep_moe``: the workload contract (params.json in, result.json and exit code out)."""

import sys

from reprokit.workloads.contract import main
from reprokit.workloads.ep_moe.workload import run

sys.exit(main("ep_moe", run))
