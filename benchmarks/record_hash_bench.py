"""Bytes hashed on the control machine per byte of a run record (#14: each byte hashed once): prints, asserts nothing.

1. remote: a real run of the smem-probe kit on an SSH test host (tests/services/up.d/10-sshhosts.sh) whose step
   (the host's Python replaced by a shell test double, as in tests/integration/hostile) leaves one large file and
   many small ones; everything is pulled back, judged, reported and listed in the manifest.
2. local: a record whose step files were written by a workload process (plain writes), finished as the runner
   finishes one (the HTML report lists the artifacts, then the manifest does).

Every sha256 that reprokit's own code asks hashlib for is counted (a counting wrapper around ``hashlib.sha256``;
the SSH library's and the host's hashing are not the control machine's record hashing and are not counted).
``before`` is this script run from a checkout of the tree before the change (``--tree``, e.g. a git worktree of
904db53 with ``.cache`` linked to this checkout's): the same scenarios, the old code.

    .venv/bin/python benchmarks/record_hash_bench.py [--big-mib 64] [--small 200] [--tree DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

TREE = Path(__file__).resolve().parent.parent
if "--tree" in sys.argv:
    TREE = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
sys.path.insert(0, str(TREE))


class Counted:
    """hashlib.sha256 as reprokit calls it, counting the bytes fed to it from reprokit's own modules."""

    hashed_bytes = 0
    hashing_s = 0.0
    by_module: dict[str, int] = {}
    _real = hashlib.sha256

    def __init__(self, data: bytes = b"", **kwargs):
        self._digest = Counted._real(**kwargs)
        self._caller = sys._getframe(1).f_globals.get("__name__", "?")
        if data:
            self.update(data, _depth=2)

    def update(self, data, _depth: int = 1) -> None:
        caller = sys._getframe(_depth).f_globals.get("__name__", "?") if _depth > 1 else self._caller
        start = time.perf_counter()
        self._digest.update(data)
        if caller.startswith("reprokit"):
            Counted.hashing_s += time.perf_counter() - start
            Counted.hashed_bytes += len(data)
            Counted.by_module[caller] = Counted.by_module.get(caller, 0) + len(data)

    def __getattr__(self, name: str):  # digest, hexdigest, copy, digest_size: what hmac and the SSH library use
        return getattr(self._digest, name)

    @classmethod
    def reset(cls) -> None:
        cls.hashed_bytes, cls.hashing_s, cls.by_module = 0, 0.0, {}


def record_bytes(run_dir: Path) -> tuple[int, int]:
    """The record's artifacts as its manifest lists them: (files, bytes)."""
    artifacts = json.loads((run_dir / "manifest.json").read_text())["artifacts"]
    return len(artifacts), sum(a["bytes"] for a in artifacts.values())


def report(name: str, run_dir: Path, wall_s: float) -> None:
    files, size = record_bytes(run_dir)
    print(f"{name}: {files} files, {size / 1e6:.1f} MB in the record; {Counted.hashed_bytes / 1e6:.1f} MB hashed on the"
          f" control machine = {Counted.hashed_bytes / size:.2f} bytes hashed per byte of record; hashing"
          f" {Counted.hashing_s:.2f} s of {wall_s:.2f} s wall")
    for module, count in sorted(Counted.by_module.items(), key=lambda kv: -kv[1]):
        print(f"    {module}: {count / 1e6:.1f} MB")


def remote(tmp: Path, big_mib: int, small: int) -> None:
    from reprokit.config.kit import load_kit_file
    from reprokit.hosts.axes import load_inventory
    from reprokit.hosts.factory import ConnectOptions
    from reprokit.run.kit_run import run_kit
    from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, fake_python, inventory_file
    from tests.integration.remote.conftest import REASON, host_workdir, known_hosts_for

    if REASON:
        print(f"remote: skipped: {REASON}")
        return
    work = host_workdir(HOST, "record-hash-bench")
    body = (f"head -c {big_mib}M /dev/urandom > big.bin; mkdir -p small;"
            f" for i in $(seq 1 {small}); do head -c 4096 /dev/urandom > small/f$i.bin; done; " + RESULT_OK)
    fake_python(work, body)
    inventory = load_inventory(inventory_file(tmp / "inv.yml", work, ansible_python_interpreter=str(work / "fake-python")))
    options = ConnectOptions(known_hosts=known_hosts_for(tmp / "known_hosts", HOST))
    Counted.reset()
    start = time.perf_counter()
    outcome = run_kit(load_kit_file(KIT), KIT, inventory.host(HOST), tmp / "runs", KIT.parent, say=lambda m: None,
                      inventory=inventory, options=options)
    report("remote", outcome.run_dir, time.perf_counter() - start)


def local(tmp: Path, big_mib: int, small: int) -> None:
    from reprokit.records.atomic import write_json_atomic
    from reprokit.records.run_dir import RunRecord

    Counted.reset()
    start = time.perf_counter()
    record = RunRecord.create(tmp / "local-runs", "bench-local", kit={"name": "bench"}, fingerprint=None, verdict=None)
    out = record.step_dir("probe")
    with open(out / "big.bin", "wb") as fh:  # as a workload process writes it
        for _ in range(big_mib):
            fh.write(bytes(range(256)) * 4096)
    for i in range(small):
        (out / f"f{i}.bin").write_bytes(i.to_bytes(4, "big") * 1024)
    write_json_atomic(out / "result.json", {"status": "ok"})
    write_json_atomic(record.dir / "verdict.json", {"verdict": "PASS", "summary": "", "expectations": []})
    record.hash_artifacts()  # the HTML report lists the artifacts before the manifest has them
    record.finish("complete")
    report("local", record.dir, time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big-mib", type=int, default=64, help="size of the step's large file")
    parser.add_argument("--small", type=int, default=200, help="number of 4 KiB files next to it")
    parser.add_argument("--tree", help="run the code of this checkout instead (the 'before' figures)")
    args = parser.parse_args()
    hashlib.sha256 = Counted
    print(f"code: {TREE}")
    with tempfile.TemporaryDirectory(prefix="rk-hashbench-") as tmp:
        remote(Path(tmp), args.big_mib, args.small)
        local(Path(tmp), args.big_mib, args.small)


if __name__ == "__main__":
    main()
