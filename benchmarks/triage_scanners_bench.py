"""Scanners built for many patterns, beside the triage's streaming ``re``, on the triage benchmark's log.

Generates the log of ``triage_bench.py`` (default 1 GiB: an EP8 sglang server's start, then hours of
serving) and, in one run, times the same job for each scanner: count the lines that match any of the
patterns the triage searches a ready server's lines for (``formats.PATTERNS`` less the
readiness-from-behaviour ones, the set ``triage_bench.py`` gives grep), reading the file in the
triage's 1 MiB regions of whole lines. The scanners:

- ``grep -cE`` in the C locale (the yardstick of the issue);
- ``rg -c`` (the ``ripgrep`` wheel's binary), when installed;
- Python ``re``: one alternation, ``finditer`` over each region (what a phrase scan in ``re`` costs; at
  about 2 MiB/s it is timed on the log's first ``--re-mib`` MiB only, and its rate compared);
- the triage's own prefilter: what ``FileParser.feed`` runs in C per region (the newline count and one
  Hyperscan pass for the not-sglang line starts and the sglang lines whose message starts with a server
  pattern's lead, as after sglang said it is ready), without the Python that reads the lines it picks;
- the same prefilter as it was in ``re`` (the newline count, a lookahead at every newline, the trigger regex),
  the code the Hyperscan pass replaced;
- ``hyperscan`` (Vectorscan in the wheel): one database of every pattern, block mode per region;
- ``google-re2``: one alternation, ``finditer`` over each region;
- the whole triage (``triage_files``), for scale.

A scanner whose package is not installed (``rg``, ``re2``: not dependencies) is reported as such. Each is run three times, alternating,
and its fastest run kept (the machine is shared), with its CPU seconds. The file is deleted at the end.

    python benchmarks/triage_scanners_bench.py [--size-mib 1024]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from triage_bench import generate  # noqa: E402

from reprokit.triage import triage_files  # noqa: E402
from reprokit.triage.formats import PATTERNS  # noqa: E402
from reprokit.triage.parser import _SCAN_READY  # noqa: E402
from reprokit.triage.scan import _count_newlines  # noqa: E402

REGION_BYTES = 1 << 20
SEARCHED = [p.regex for p in PATTERNS if not p.readiness]
# the parser's not-sglang scan before Hyperscan: a lookahead at every newline
NOT_SGLANG_LINE_RE = re.compile(rb"\n(?!\[(?:[0-9]{4}-|[0-9][0-9][-:]))")
ALTERNATION = "|".join(SEARCHED)


def regions(path: Path):
    """The file in regions of whole lines, about REGION_BYTES each (the triage reader's unit)."""
    with open(path, "rb") as stream:
        tail = b""
        while chunk := stream.read(REGION_BYTES):
            buffer = tail + chunk
            cut = buffer.rfind(b"\n") + 1
            tail = buffer[cut:]
            if cut:
                yield buffer[:cut]
        if tail:
            yield tail + b"\n"


def _lines_of(buffer: bytes, ends) -> int:
    """Distinct lines holding the match ends ``ends`` (sorted)."""
    count, line_end = 0, -1
    for end in ends:
        if end > line_end:
            count += 1
            line_end = buffer.find(b"\n", max(end - 1, 0))
            if line_end == -1:
                line_end = len(buffer)
    return count


RE_MIB = 64  # set from --re-mib


def scan_re(path: Path) -> int:
    compiled = re.compile(ALTERNATION.encode())
    found = 0
    for index, buffer in enumerate(regions(path)):
        if index >= RE_MIB:
            break
        found += _lines_of(buffer, (m.end() for m in compiled.finditer(buffer)))
    return found


def scan_prefilter(path: Path) -> int:
    """Lines picked: not sglang's, or triggered."""
    picked = 0
    for buffer in regions(path):
        end = len(buffer)
        _count_newlines(buffer, 0, end)
        not_sglang, triggered = _SCAN_READY.lines(buffer, 0, end)
        picked += len(not_sglang) + len(triggered)
    return picked


def scan_prefilter_re(path: Path) -> int:
    """The same lines, found as the parser found them in ``re``."""
    picked = 0
    for buffer in regions(path):
        end = len(buffer)
        _count_newlines(buffer, 0, end)
        picked += sum(1 for _ in NOT_SGLANG_LINE_RE.finditer(buffer, 0, end - 1))
        picked += len({buffer.rfind(b"\n", 0, m.start()) for m in _SCAN_READY.trigger.finditer(buffer, 0, end)})
    return picked


def scan_hyperscan(path: Path) -> int:
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[p.encode() for p in SEARCHED], ids=list(range(len(SEARCHED))),
                     elements=len(SEARCHED), flags=[hyperscan.HS_FLAG_ALLOWEMPTY] * len(SEARCHED))
    total = 0
    for buffer in regions(path):
        ends: list[int] = []
        database.scan(buffer, match_event_handler=lambda _id, _from, to, _flags, found: found.append(to),
                      context=ends)
        total += _lines_of(buffer, sorted(ends))
    return total


def scan_re2(path: Path) -> int:
    import re2

    compiled = re2.compile(ALTERNATION.encode())
    return sum(_lines_of(b, (m.end() for m in compiled.finditer(b))) for b in regions(path))


def run_external(argv: list[str]) -> Callable[[Path], int]:
    def scan(path: Path) -> int:
        done = subprocess.run([*argv, str(path)], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"},
                              check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{argv[0]} failed: {done.stderr.strip()}")
        return int(done.stdout.strip() or 0)
    return scan


def scan_triage(path: Path) -> int:
    return triage_files([path], compute_tables=False).to_json()["counts"]["lines"]


def _available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _timed(scan: Callable[[Path], int], path: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of this process and its children, result)."""
    def cpu() -> float:
        now = os.times()
        return now.user + now.system + now.children_user + now.children_system
    started, cpu_started = time.perf_counter(), cpu()
    result = scan(path)
    return time.perf_counter() - started, cpu() - cpu_started, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the generated log in MiB (default 1024)")
    parser.add_argument("--re-mib", type=int, default=64, help="MiB of the log the re alternation reads (default 64)")
    args = parser.parse_args()
    global RE_MIB
    RE_MIB = args.re_mib
    rg = shutil.which("rg") or (str(Path(sys.executable).parent / "rg")
                                if (Path(sys.executable).parent / "rg").exists() else None)
    scanners: dict[str, Callable[[Path], int] | None] = {
        "grep -cE (LC_ALL=C)": run_external(["grep", "-cE", ALTERNATION]),
        "rg -c (ripgrep wheel)": run_external([rg, "-c", "-e", ALTERNATION]) if rg else None,
        "python re, one alternation": scan_re,
        "triage prefilter (count + Hyperscan pass)": scan_prefilter,
        "triage prefilter as it was (count + 2 re scans)": scan_prefilter_re,
        "hyperscan (Vectorscan), every pattern": scan_hyperscan,
        "google-re2, one alternation": scan_re2 if _available("re2") else None,
        "whole triage": scan_triage,
    }
    workdir = Path(tempfile.mkdtemp(prefix="triage-scanners-"))
    path = workdir / "ep8-server.log"
    try:
        generate(path, args.size_mib << 20)
        size_mib = path.stat().st_size / 2**20
        print(f"log: {size_mib:.0f} MiB; {len(SEARCHED)} patterns")
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name, scan in scanners.items() if scan}
        for _ in range(3):
            for name in runs:
                runs[name].append(_timed(scanners[name], path))
        grep_wall, grep_cpu, _ = min(runs["grep -cE (LC_ALL=C)"])
        for name, scan in scanners.items():
            if scan is None:
                print(f"{name:48} not installed")
                continue
            wall, cpu_s, result = min(runs[name])
            if scan is scan_re and RE_MIB < size_mib:  # compare rates: it read RE_MIB MiB only
                wall, cpu_s = wall * size_mib / RE_MIB, cpu_s * size_mib / RE_MIB
                name = f"{name} (first {RE_MIB} MiB, scaled)"
            print(f"{name:48} {wall:6.2f} s wall ({size_mib / wall:5.0f} MiB/s, {wall / grep_wall:4.2f} x grep), "
                  f"{cpu_s:6.2f} s CPU ({cpu_s / grep_cpu:4.2f} x grep); result {result}")
        print(f"machine: {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
