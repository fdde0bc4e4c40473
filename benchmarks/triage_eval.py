"""The triage against an expert's reading of real logs: verdict agreement and fatal recall.

Runs ``triage_files`` on every excerpt of ``tests/fixtures/real/`` (verbatim logs from upstream
threads, each with a sidecar naming its source and the expected reading) and prints, per excerpt,
the fields where the triage disagrees, then the figures quoted in the README:

- verdict agreement: excerpts whose verdict is the expert's;
- fatal recall: of the excerpts an expert calls FATAL, how many the triage calls FATAL;
- crashes called READY: must be 0;
- full agreement: excerpts where every expected field (evidence line, phase, versions, ranks,
  tactics, ...) agrees.

    python benchmarks/triage_eval.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reprokit.triage import triage_files  # noqa: E402
from reprokit.triage.corpus import compare, load_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO / "tests/fixtures/real", help="directory of excerpts")
    parser.add_argument("--verbose", action="store_true", help="print every excerpt, not only disagreements")
    args = parser.parse_args()

    excerpts = load_corpus(args.corpus)
    verdicts_agree = full_agree = fatal_expected = fatal_found = crash_ready = 0
    for excerpt in excerpts:
        report = triage_files([excerpt.log], compute_tables=False).to_json()
        differences = compare(excerpt.expected, report)
        want, got = excerpt.expected["verdict"], report["verdict"]
        verdicts_agree += want == got
        full_agree += not differences
        fatal_expected += want == "FATAL"
        fatal_found += want == "FATAL" and got == "FATAL"
        crash_ready += want == "FATAL" and got.startswith("READY")
        if differences or args.verbose:
            print(f"{'ok  ' if not differences else 'DIFF'} {excerpt.name}: {got}")
            for name, (expected, observed) in differences.items():
                print(f"       {name}: expected {expected!r}, got {observed!r}")
    total = len(excerpts)
    print(f"excerpts:          {total} (from {len({e.sidecar['source']['repository'] for e in excerpts})} repositories)")
    print(f"verdict agreement: {verdicts_agree}/{total} ({100 * verdicts_agree / total:.0f}%)")
    print(f"fatal recall:      {fatal_found}/{fatal_expected} ({100 * fatal_found / max(fatal_expected, 1):.0f}%)")
    print(f"crashes as READY:  {crash_ready}")
    print(f"full agreement:    {full_agree}/{total} ({100 * full_agree / total:.0f}%) (every expected field)")
    return 0 if verdicts_agree == total and full_agree == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
