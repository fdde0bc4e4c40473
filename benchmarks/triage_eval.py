"""The triage against an expert's reading of real logs, on the tuning half and the held-out half apart.

Runs ``triage_files`` on every excerpt of ``tests/fixtures/real/`` (verbatim logs from upstream
threads, each with a sidecar naming its source and the expected reading), splits them by thread into
the tuning and the held-out half (``reprokit.triage.corpus.half``: sha256 of the thread URL, even or
odd, unless the thread was moved to tuning), and prints per half:

- verdict agreement: excerpts whose verdict is the expert's;
- fatal recall: of the excerpts an expert calls FATAL, how many the triage calls FATAL;
- false FATAL: excerpts the triage calls FATAL that the expert does not;
- crashes called READY: must be 0;
- catch-all share: excerpts whose verdict no rule of the table decided (the catch-all rule), i.e. what
  the rule table does not know;
- full agreement: excerpts where every expected field (evidence line, phase, versions, ranks,
  tactics, readiness, ...) agrees;
- new excerpts only: the held-out figures on the excerpts added with the split (sidecar
  ``added_with_split``): the earlier triage was tuned on all 46 older ones, whichever half they fell in;
  and each half's figures on the excerpts of each later round alone (sidecar ``added_round``: 3, 4, 5, 6, 7;
  each round's first count is recorded in tests/fixtures/real/README.md).

    python benchmarks/triage_eval.py [--corpus DIR] [--verbose] [--half tuning|held_out|all]

Looking at a held-out failure means moving its thread to the tuning half (``MOVED_TO_TUNING``): do not
print held-out disagreements unless you mean to (``--verbose`` prints the tuning half's only, unless
``--half held_out`` is given).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reprokit.triage import triage_files  # noqa: E402
from reprokit.triage.corpus import HALVES, compare, half, load_corpus, moved_to_tuning  # noqa: E402


def _catch_all(report: dict) -> bool:
    """True when the catch-all rule decided: no rule of the table knew any line of the log. A report from
    before the rule table has no rule: its fall-through for a log with no framework line is the same thing."""
    decided = report.get("decided_by")
    if decided is not None:
        return decided["rule"] == "catch_all"
    return report["reason"].startswith("no line of a serving framework")


def _figures(rows: list[tuple[str, dict, dict, dict]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for _, expected, report, differences in rows:
        want, got = expected["verdict"], report["verdict"]
        counts["total"] += 1
        counts["agree"] += want == got
        counts["full"] += not differences
        counts["fatal_expected"] += want == "FATAL"
        counts["fatal_found"] += want == "FATAL" and got == "FATAL"
        counts["false_fatal"] += want != "FATAL" and got == "FATAL"
        counts["crash_ready"] += want == "FATAL" and got.startswith("READY")
        counts["catch_all"] += _catch_all(report)
    return counts


def _print(title: str, c: dict[str, int]) -> None:
    total = max(c["total"], 1)
    print(f"{title}: {c['total']} excerpts")
    print(f"  verdict agreement: {c['agree']}/{c['total']} ({100 * c['agree'] / total:.1f}%)")
    print(f"  fatal recall:      {c['fatal_found']}/{c['fatal_expected']} "
          f"({100 * c['fatal_found'] / max(c['fatal_expected'], 1):.1f}%)")
    print(f"  false FATAL:       {c['false_fatal']}")
    print(f"  crashes as READY:  {c['crash_ready']}")
    print(f"  catch-all share:   {c['catch_all']}/{c['total']} ({100 * c['catch_all'] / total:.1f}%)")
    print(f"  full agreement:    {c['full']}/{c['total']} ({100 * c['full'] / total:.1f}%) (every expected field)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO / "tests/fixtures/real", help="directory of excerpts")
    parser.add_argument("--verbose", action="store_true", help="print each excerpt of the half shown")
    parser.add_argument("--half", choices=(*HALVES, "all"), default="tuning",
                        help="whose disagreements to print (default: tuning; held_out means looking at them)")
    args = parser.parse_args()

    excerpts = load_corpus(args.corpus)
    moved = moved_to_tuning(args.corpus)
    order = sorted(excerpts, key=lambda e: (e.sidecar.get("added_with_split", False), e.name))
    rows: dict[str, list] = {name: [] for name in HALVES}
    new_rows = []
    round_rows: dict[tuple[int, str], list] = {}  # (round, half): the excerpts a later round added
    for excerpt in order:
        report = triage_files([excerpt.log], compute_tables=False).to_json()
        differences = compare(excerpt.expected, report)
        which = half(excerpt, moved)
        row = (excerpt.url, excerpt.expected, report, differences)
        rows[which].append(row)
        if which == "held_out" and excerpt.sidecar.get("added_with_split"):
            new_rows.append(row)
        if (added := excerpt.sidecar.get("added_round")) is not None:
            round_rows.setdefault((added, which), []).append(row)
        if args.half in (which, "all") and (differences or args.verbose):
            print(f"{'ok  ' if not differences else 'DIFF'} [{which}] {excerpt.name}: {report['verdict']}")
            for name, (expected, observed) in differences.items():
                print(f"       {name}: expected {expected!r}, got {observed!r}")
    threads = {h: len({r[0] for r in rows[h]}) for h in HALVES}  # distinct thread URLs
    print(f"corpus: {len(excerpts)} excerpts from {len({e.url for e in excerpts})} threads "
          f"({len({e.sidecar['source']['repository'] for e in excerpts})} repositories); "
          f"{len(moved)} thread(s) moved to tuning")
    for name in HALVES:
        _print(f"{name} half ({threads[name]} threads)", _figures(rows[name]))
    _print("held-out, excerpts added with the split only", _figures(new_rows))
    for added, name in sorted(round_rows):  # each later round's excerpts (sidecar added_round), read before any change
        _print(f"{name}, excerpts added in round {added} only", _figures(round_rows[added, name]))
    _print("both halves", _figures(rows["tuning"] + rows["held_out"]))
    held = _figures(rows["held_out"])
    return 0 if held["agree"] == held["total"] and held["false_fatal"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
