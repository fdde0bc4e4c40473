"""Reading every kept record's manifest and verdict into the models, before and after they became pydantic (#38 item 8):
prints, asserts nothing.

``before`` is the hand-written field checker as it was at ``--before`` (a commit; default 485de5b, the last with it):
its four modules (``fields.py``, ``models.py``, ``fingerprint.py``, ``inputs.py``) are taken from git into a scratch
package and imported beside the tree's. ``after`` is this tree's. Both read the same parsed JSON (parsing is the same
code in both) of every ``manifest.json`` and ``verdict.json`` under evidence/, and write it back (``to_json``); the
two are timed in alternation, in one process; the best pass of each is kept (the machine is shared: a slower
pass is someone else's load) and the ratio is printed.

    .venv/bin/python benchmarks/records_load_bench.py [--before 485de5b] [--repeats 30]
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TREE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TREE))
OLD_MODULES = ("fields", "inputs", "fingerprint", "models")


def old_models(commit: str, scratch: Path):
    """The models module of ``commit``, its sibling modules loaded from there too (as package ``records_before``)."""
    package = scratch / "records_before"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in OLD_MODULES:
        source = subprocess.run(["git", "-C", str(TREE), "show", f"{commit}:reprokit/records/{name}.py"],
                                check=True, capture_output=True, text=True).stdout
        for other in OLD_MODULES:
            source = source.replace(f"reprokit.records.{other} ", f"records_before.{other} ")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(scratch))
    return importlib.import_module("records_before.models")


def documents(name: str) -> list[tuple[object, str]]:
    return [(json.loads(path.read_text(encoding="utf-8")), str(path)) for path in sorted((TREE / "evidence").rglob(name))]


def timed_pass(models, manifests: list, verdicts: list, write: bool) -> float:
    start = time.perf_counter()
    for data, where in manifests:
        manifest = models.Manifest.from_json(data, where)
        if write:
            manifest.to_json()
    for data, where in verdicts:
        verdict = models.Verdict.from_json(data, where)
        if write:
            verdict.to_json()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="485de5b", help="the commit whose hand-written models are 'before'")
    parser.add_argument("--repeats", type=int, default=30, help="timed passes of each, alternating")
    args = parser.parse_args()
    from reprokit.records import models as after

    manifests, verdicts = documents("manifest.json"), documents("verdict.json")
    with tempfile.TemporaryDirectory() as scratch:
        before = old_models(args.before, Path(scratch))
        print(f"{len(manifests)} manifests and {len(verdicts)} verdicts of evidence/; best of {args.repeats} passes each")
        for write in (False, True):
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.repeats):
                for label, models in (("before", before), ("after", after)):
                    times[label].append(timed_pass(models, manifests, verdicts, write))
            old_ms, new_ms = (min(times[label]) * 1000 for label in ("before", "after"))
            what = "read and written back" if write else "read"
            print(f"  {what:22} before {old_ms:7.2f} ms  after {new_ms:7.2f} ms  after/before {new_ms / old_ms:.2f}")


if __name__ == "__main__":
    main()
