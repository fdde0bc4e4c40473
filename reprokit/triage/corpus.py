"""A corpus of real logs with expected readings, and how a triage report is held against them.

Each excerpt ``NAME.log`` (verbatim from an upstream thread) has a sidecar ``NAME.json``::

    {"source": {"repository": ..., "number": ..., "url": ...}, "context": {...}, "covers": [...],
     "expected": {"verdict": "FATAL", "evidence_line": 2, "fatal_kind": "process_exception", ...},
     "reading": "what an expert reads in it, in words"}

``expected`` holds only what the log says; a key absent from it is not compared. The
evaluation script (``benchmarks/triage_eval.py``) and the corpus test both use ``compare``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError

# fields of 'expected', and how each is read from a report's JSON
_READERS = {
    "verdict": lambda r: r["verdict"],
    "evidence_line": lambda r: (r.get("evidence") or {}).get("line"),
    "phase": lambda r: r.get("phase"),
    "fatal_kind": lambda r: (r.get("fatal") or {}).get("family"),
    "cause": lambda r: (r.get("fatal") or {}).get("cause"),
    "versions": lambda r: r.get("versions"),
    "arch": lambda r: r.get("arch"),
    "ranks": lambda r: r.get("ranks"),
    "autotune_failures": lambda r: sum(row["count"] for row in r["autotune_failures"]),
    "tactics": lambda r: [
        {"tactic": row["tactic"], "tile": row["tile"], "mapped": row["mapping"]["status"] == "mapped",
         "reason": row["mapping"]["reason"]}
        for row in r["autotune_failures"]
    ],
    "skipped": lambda r: {s["op"]: s["skipped"] for s in r["autotune_skipped_summaries"]},
    "errors": lambda r: sorted({e["kind"] for e in r["errors"]}),
    "flashinfer_levels": lambda r: r["flashinfer"]["logger_levels"],
    "records_after_progress_bar": lambda r: r["counts"]["records_after_progress_bar"],
}
_SUBSET_FIELDS = frozenset({"errors"})  # expected kinds must all be there; others may be too
_OPTIONAL_WHEN_NONE = frozenset({"cause"})  # None: the expert names no cause, so none is compared


@dataclass(frozen=True)
class Excerpt:
    name: str
    log: Path
    sidecar: dict[str, Any]

    @property
    def expected(self) -> dict[str, Any]:
        return self.sidecar["expected"]


def load_corpus(directory: Path) -> list[Excerpt]:
    """Every ``*.log`` of ``directory`` with its sidecar; a log without one is a ``ConfigError``."""
    excerpts = []
    for log in sorted(directory.glob("*.log")):
        sidecar = log.with_suffix(".json")
        if not sidecar.is_file():
            raise ConfigError(f"{log}: no sidecar {sidecar.name} with its provenance and expected reading")
        try:
            data = json.loads(sidecar.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{sidecar}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        unknown = set(data.get("expected", {})) - set(_READERS) - {"evidence_text"}
        if unknown:
            raise ConfigError(f"{sidecar}: unknown expected field(s) {', '.join(sorted(unknown))}")
        excerpts.append(Excerpt(log.stem, log, data))
    return excerpts


def compare(expected: dict[str, Any], report: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The fields where the report disagrees with the expert: ``{field: (expected, observed)}``."""
    differences = {}
    for name, want in expected.items():
        if name not in _READERS or (want is None and name in _OPTIONAL_WHEN_NONE):
            continue
        got = _READERS[name](report)
        if name in _SUBSET_FIELDS:
            agrees = set(want) <= set(got)
        else:
            agrees = got == want
        if not agrees:
            differences[name] = (want, got)
    return differences
