"""Triage speed and memory on a big multi-rank log, against ``grep -cE`` on the same file.

Generates a log (default 1 GiB) in a temporary directory: the start of an EP8 sglang
server (weight loading, FlashInfer autotuning with 192 failed tactics and their C++
backtraces, readiness), then hours of serving from 8 ranks (decode/prefill batches,
uvicorn access lines, tqdm bars) with rare errors sprinkled in. Then, in one run, times

- ``grep -cE`` with the alternation of the patterns of ``reprokit.triage.formats.PATTERNS`` that
  the triage looks for on this log (the same regexes; the readiness-from-behaviour ones, which it
  stops reading once sglang says it is ready, left out), in the C locale (grep's fastest) and,
  when the machine has it, in C.UTF-8 (how grep runs in a UTF-8 session); and with every pattern,
  in the C locale (they match nearly every serving line, so grep stops early on each: the
  faster grep), and
- ``triage_files`` in a child process, which reports its own peak RSS (``VmHWM`` of
  ``/proc/self/status``: unlike ``ru_maxrss`` it is not inherited from the forking parent),

each three times, alternating, keeping the fastest run of each (the development VM is shared), and
prints the figures. The file is deleted at the end.

    python benchmarks/triage_bench.py                 # 1 GiB
    python benchmarks/triage_bench.py --size-mib 64   # quicker
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reprokit.triage.formats import PATTERNS  # noqa: E402

STARTUP_FIXTURE = REPO / "tests/fixtures/logs/sglang-ep8-0.6.3-ready-autotune-failures.log.gz"
BLOCK_BYTES = 1 << 20
DISTINCT_BLOCKS = 32
RANKS = 8

TRIAGE_CHILD = """
import json, re, resource, sys, time
from pathlib import Path
from reprokit.triage import triage_files
started, cpu_started = time.perf_counter(), time.process_time()
report = triage_files([Path(sys.argv[1])], flashinfer_version="0.6.3").to_json()
elapsed_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
try:
    status = Path("/proc/self/status").read_text()
    peak_rss_bytes = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) * 1024
except (OSError, AttributeError):
    peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"elapsed_s": elapsed_s, "cpu_s": cpu_s, "peak_rss_bytes": peak_rss_bytes, "verdict": report["verdict"],
                  "lines": report["counts"]["lines"],
                  "unknown_lines": report["counts"]["unknown_lines"],
                  "autotune_failures": sum(r["count"] for r in report["autotune_failures"]),
                  "errors": sum(e["count"] for e in report["errors"])}))
"""


def _serving_block(rng: random.Random, minute: int) -> bytes:
    """About BLOCK_BYTES of serving-time lines from 8 ranks, with a rare error in some blocks."""
    lines: list[str] = []
    size = 0
    second = 0
    while size < BLOCK_BYTES:
        second = (second + 1) % 60
        ts = f"2026-02-19 {10 + minute // 60 % 14:02d}:{minute % 60:02d}:{second:02d}"
        pick = rng.random()
        rank = rng.randrange(RANKS)
        if pick < 0.55:
            line = (f"[{ts} TP{rank} EP{rank}] Decode batch, #running-req: {rng.randrange(512)}, "
                    f"#token: {rng.randrange(10**6)}, token usage: 0.{rng.randrange(100):02d}, cuda graph: True, "
                    f"gen throughput (token/s): {rng.random() * 4000:.2f}, #queue-req: {rng.randrange(40)}, ")
        elif pick < 0.75:
            line = (f"[{ts} TP{rank} EP{rank}] Prefill batch, #new-seq: {rng.randrange(1, 9)}, "
                    f"#new-token: {rng.randrange(8192)}, #cached-token: {rng.randrange(8192)}, "
                    f"token usage: 0.{rng.randrange(100):02d}, #running-req: {rng.randrange(512)}, #queue-req: 0, ")
        elif pick < 0.9999:
            line = (f'[{ts}] INFO:     10.1.{rng.randrange(256)}.{rng.randrange(256)}:{rng.randrange(30000, 60000)} - '
                    f'"POST /v1/chat/completions HTTP/1.1" 200 OK')
        else:
            line = (f"Capturing batches (bs={rng.randrange(1, 512)} avail_mem=12.04 GB): "
                    f"{rng.randrange(100)}%|█████     | 26/52")
        lines.append(line)
        size += len(line) + 1
    if rng.random() < 0.1:  # a request that failed: logged with its traceback, not fatal
        lines += [
            f"[2026-02-19 12:{minute % 60:02d}:30] ERROR:    Exception in ASGI application",
            "Traceback (most recent call last):",
            '  File "/usr/local/lib/python3.12/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 409, '
            "in run_asgi",
            "    result = await app(  # type: ignore[func-returns-value]",
            "ValueError: The input (262145 tokens) is longer than the model's context length (202752 tokens).",
        ]
    return ("\n".join(lines) + "\n").encode()


def generate(path: Path, size_bytes: int) -> None:
    rng = random.Random(42)
    blocks = [_serving_block(rng, minute) for minute in range(DISTINCT_BLOCKS)]
    with open(path, "wb") as out:
        out.write(gzip.decompress(STARTUP_FIXTURE.read_bytes()))
        written = out.tell()
        index = 0
        while written < size_bytes:
            block = blocks[index % DISTINCT_BLOCKS]
            out.write(block)
            written += len(block)
            index += 1


def utf8_locale() -> str | None:
    """C.UTF-8 under the spelling this machine knows, if it has it."""
    known = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False).stdout.split()
    return next((name for name in ("C.UTF-8", "C.utf8") if name in known), None)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_grep(path: Path, pattern: str, locale: str) -> tuple[float, int, float]:
    """(wall seconds, matching lines, CPU seconds of grep itself: on a shared machine the steadier figure)."""
    started, cpu_started = time.perf_counter(), _children_cpu_s()
    done = subprocess.run(["grep", "-cE", pattern, str(path)], capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": locale}, check=False)
    elapsed_s, cpu_s = time.perf_counter() - started, _children_cpu_s() - cpu_started
    if done.returncode not in (0, 1):
        raise SystemExit(f"grep failed: {done.stderr.strip()}")
    return elapsed_s, int(done.stdout.strip() or 0), cpu_s


def time_triage(path: Path) -> dict:
    """Run the triage in a fresh interpreter; its figures as JSON (time, peak RSS, verdict, counts)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", TRIAGE_CHILD, str(path)], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"triage child failed with exit code {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the generated log in MiB (default 1024)")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the log (default: a new temp dir)")
    args = parser.parse_args()

    load_at_start = os.getloadavg()  # the machine is shared: the figures are read with it
    workdir = Path(tempfile.mkdtemp(prefix="triage-bench-", dir=args.dir))
    path = workdir / "ep8-server.log"
    try:
        started = time.perf_counter()
        generate(path, args.size_mib << 20)
        size_bytes = path.stat().st_size
        print(f"generated {size_bytes / 2**20:.0f} MiB in {time.perf_counter() - started:.1f} s: {path}")
        searched = [p for p in PATTERNS if not p.readiness]
        sets = {"C": searched, "C, every pattern": list(PATTERNS)}
        if (utf8 := utf8_locale()) is not None:
            sets[utf8] = searched
        locales = list(sets)
        grep_runs: dict[str, list[tuple[float, int]]] = {name: [] for name in locales}
        triage_runs = []
        for _ in range(3):  # alternate, keep the best of each: the machine may be shared
            for name in locales:
                pattern = "|".join(p.regex for p in sets[name])
                grep_runs[name].append(time_grep(path, pattern, name.split(",")[0]))
            triage_runs.append(time_triage(path))
        triage = min(triage_runs, key=lambda run: run["elapsed_s"])
        rss_bytes = max(run["peak_rss_bytes"] for run in triage_runs)
        triage_s = triage["elapsed_s"]
        mib_per_s = size_bytes / 2**20 / triage_s
        print(f"size:            {size_bytes / 2**20:.0f} MiB, {triage['lines']} lines")
        for name in locales:
            seconds, matches, _ = min(grep_runs[name])
            print(f"grep -cE:        {seconds:.2f} s ({len(sets[name])} patterns, LC_ALL={name}, {matches} matching lines)")
        print(f"triage:          {triage_s:.2f} s ({mib_per_s:.0f} MiB/s), verdict {triage['verdict']}, "
              f"{triage['autotune_failures']} autotune failures, {triage['errors']} other errors, "
              f"{triage['unknown_lines']} unknown lines")
        for name in locales:
            print(f"triage / grep:   {triage_s / min(grep_runs[name])[0]:.2f} against LC_ALL={name} "
                  "(below 1: the triage is faster)")
        triage_cpu_s = min(run["cpu_s"] for run in triage_runs)
        grep_cpu_s = min(cpu for _, _, cpu in grep_runs["C"])
        print(f"CPU time:        triage {triage_cpu_s:.2f} s, grep (LC_ALL=C) {grep_cpu_s:.2f} s: "
              f"{triage_cpu_s / grep_cpu_s:.2f} (each process's own CPU seconds; wall time waits for a shared CPU)")
        print(f"triage peak RSS: {rss_bytes / 2**20:.1f} MiB (whole child process, interpreter included)")
        print(f"machine:         {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, load average (1, 5, 15 min) "
              f"{' '.join(f'{x:.2f}' for x in load_at_start)} at the start, "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
