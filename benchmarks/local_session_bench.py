"""What one step lifecycle for every host costs on this machine: a workload run through the executor (this machine's
access, the session launcher's detached wrapper, the shipped code, the checked copy home) against the same workload
started directly as a subprocess (what the removed local executor did). Prints figures, asserts nothing.

Both run ``reprokit.workloads.fingerprint`` (no GPU needed: it reports none) ``--repeat`` times each, interleaved,
in one process; the ratio is of the medians measured in this run.

    .venv/bin/python benchmarks/local_session_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reprokit.hosts.here import run_here  # noqa: E402

MODULE = "reprokit.workloads.fingerprint"


def direct(out_dir: Path) -> float:
    out_dir.mkdir(parents=True)
    (out_dir / "params.json").write_text("{}")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", MODULE, "--params", str(out_dir / "params.json"), "--out-dir", str(out_dir)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - started


def through_the_executor(out_dir: Path) -> float:
    started = time.monotonic()
    ran = run_here(MODULE, {}, out_dir, "fingerprint")
    assert ran.result is not None, ran.result_problem
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"direct": [], "executor": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            times["direct"].append(direct(Path(tmp) / f"d{i}"))
            times["executor"].append(through_the_executor(Path(tmp) / f"e{i}"))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(json.dumps({"repeat": args.repeat, "median_s": {k: round(v, 3) for k, v in medians.items()},
                      "executor_over_direct": round(medians["executor"] / medians["direct"], 2),
                      "added_s": round(medians["executor"] - medians["direct"], 3)}, indent=2))


if __name__ == "__main__":
    main()
