import sys

from reprokit.workloads.contract import main
from reprokit.workloads.tile_sweep.step import run

if __name__ == "__main__":
    sys.exit(main("sweep", run))
