"""Pull-back and redaction figures for the hostile-host hardening (#17): prints them, asserts nothing.

1. Pull-back throughput of the hardened path (host-side O_NOFOLLOW reader, sha256 on both sides) against scp,
   on one SSH test host (tests/services/up.d/10-sshhosts.sh), 4 files; and the cost per small file.
2. Peak memory of redacting a large file (streamed), in a fresh process, against the file's size.

    .venv/bin/python benchmarks/pullback_bench.py [--pull-mib 256] [--redact-mib 512]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.hosts.axes import load_inventory  # noqa: E402
from reprokit.hosts.factory import ConnectOptions, executor_for  # noqa: E402
from reprokit.output.secrets import Redactor  # noqa: E402
from tests.integration.remote.conftest import STATE, host_workdir, known_hosts_for, write_inventory  # noqa: E402

REDACT = """
import resource, sys, time
from pathlib import Path
from reprokit.output.secrets import Redactor
path = Path(sys.argv[1])
start = time.perf_counter()
Redactor(["hf_BENCH_SECRET_0123456789"]).file(path)
elapsed = time.perf_counter() - start
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, elapsed)
"""


def interleaved(first, second, repeats: int) -> tuple[float, float]:
    """Medians of ``first`` and ``second`` run in turn, so that a load coming and going hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, into in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            into.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pull-mib", type=int, default=256, help="size of the pull-back set (4 files)")
    parser.add_argument("--repeats", type=int, default=5, help="turns of each side")
    parser.add_argument("--redact-mib", type=int, default=512, help="size of the file to redact")
    args = parser.parse_args()
    if not (STATE / "id_ed25519").exists():
        sys.exit("SSH test hosts are not up: run tests/services/up first")
    tmp = Path(tempfile.mkdtemp(prefix="rk-pullbench-"))
    work = host_workdir("h1", "pullbench")
    inventory = load_inventory(write_inventory(tmp / "inv.yml", {"h1": {"workdir": work}}))
    known = known_hosts_for(tmp / "known_hosts", "h1")
    ex = executor_for(inventory.host("h1"), inventory, Path("runs"), ConnectOptions(known_hosts=known), say=lambda m: None)
    ex.connect()

    big, small = work / "big", work / "small"
    per_file = args.pull_mib // 4
    ex.transport.sh(f"mkdir -p {big} {small} && for i in 1 2 3 4; do head -c {per_file}M /dev/urandom > {big}/f$i.bin; done"
                    f" && for i in $(seq 1 50); do echo $i > {small}/f$i.txt; done", timeout_s=300)
    total_mb = 4 * per_file * 1.048576

    def pull(remote: Path):
        def run():
            ex.pullback.pull(str(remote), Path(tempfile.mkdtemp(dir=tmp)))
        return run

    def scp():
        subprocess.run(["scp", "-q", "-r", "-i", str(STATE / "id_ed25519"), "-o", f"UserKnownHostsFile={known}",
                        "-o", "StrictHostKeyChecking=yes", f"rkuser@10.213.0.11:{big}", tempfile.mkdtemp(dir=tmp)],
                       check=True)

    pull_s, scp_s = interleaved(pull(big), scp, args.repeats)
    print(f"pull-back: {total_mb / pull_s:.0f} MB/s (O_NOFOLLOW reader, sha256-verified) vs scp {total_mb / scp_s:.0f}"
          f" MB/s: {scp_s / pull_s:.0%} of scp  ({total_mb:.0f} MB in 4 files, median of {args.repeats}, turn about;"
          f" load {load()})")
    ex.pullback.redactor = Redactor(["hf_BENCH_SECRET_0123456789"])  # a kit with a secret: every file is masked too
    masked_s, scp_s = interleaved(pull(big), scp, args.repeats)
    ex.pullback.redactor = Redactor()
    print(f"pull-back with one secret to mask: {total_mb / masked_s:.0f} MB/s vs scp {total_mb / scp_s:.0f} MB/s:"
          f" {scp_s / masked_s:.0%} of scp  (load {load()})")
    small_s = median_time(pull(small), 3)
    print(f"pull-back of 50 small files: {small_s:.2f} s, {small_s / 50 * 1000:.0f} ms per file (median of 3)")
    ex.close_connection()

    log = tmp / "big.log"
    with open(log, "wb") as fh:
        line = b"x" * 99 + b"\n"
        for _ in range(args.redact_mib * 1024 * 1024 // 100):
            fh.write(line)
        fh.write(b"token hf_BENCH_SECRET_0123456789\n")
    out = subprocess.run([sys.executable, "-c", REDACT, str(log)], cwd=REPO, capture_output=True, text=True, check=True)
    rss_kib, elapsed_s = out.stdout.split()
    print(f"redaction of a {args.redact_mib} MiB file: peak RSS {int(rss_kib) / 1024:.0f} MiB, {float(elapsed_s):.1f} s"
          f" ({args.redact_mib / float(elapsed_s):.0f} MiB/s, two streamed passes)")
    subprocess.run(["rm", "-rf", str(tmp), str(work)], check=False)


if __name__ == "__main__":
    main()
