"""A corpus of real logs with expected readings, and how a triage report is held against them.

Each excerpt ``NAME.log`` (verbatim from an upstream thread) has a sidecar ``NAME.json``::

    {"source": {"repository": ..., "number": ..., "url": ...}, "context": {...}, "covers": [...],
     "expected": {"verdict": "FATAL", "evidence_line": 2, "fatal_kind": "process_exception", ...},
     "reading": "what an expert reads in it, in words"}

``expected`` holds only what the log says; a key absent from it is not compared. The
evaluation script (``benchmarks/triage_eval.py``) and the corpus test both use ``compare``.

The corpus is split in two halves by its thread, never by excerpt, so that two excerpts of one thread
are never on both sides: ``half(url)`` is ``tuning`` when the first byte of sha256(thread URL) is even,
``held_out`` when odd. A held-out thread whose failure was looked at while changing the triage moves to
the tuning half for good (``MOVED_TO_TUNING``, one URL a line with the reason, in the corpus directory),
so the held-out half stays unseen.
"""

from __future__ import annotations

import hashlib
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
    "other_autotune_failures": lambda r: sum(row["count"] for row in r.get("other_autotune_failures") or []),
    "readiness": lambda r: (r.get("readiness") or {}).get("by"),
}
HALVES = ("tuning", "held_out")
MOVED_TO_TUNING = "MOVED_TO_TUNING"  # file of the corpus directory: held-out threads looked at, now tuning
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

    @property
    def url(self) -> str:
        return self.sidecar["source"]["url"]


def hashed_half(url: str) -> str:
    """The half a thread falls in by the stable rule: sha256(url)'s first byte even = tuning, odd = held-out."""
    return "tuning" if hashlib.sha256(url.encode("utf-8")).digest()[0] % 2 == 0 else "held_out"


def moved_to_tuning(directory: Path) -> dict[str, str]:
    """Held-out threads that were looked at, and why: ``{url: reason}`` from the corpus's MOVED_TO_TUNING file."""
    path = directory / MOVED_TO_TUNING
    moved: dict[str, str] = {}
    if not path.is_file():
        return moved
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        url, _, reason = line.partition(" ")
        if not url.startswith("https://github.com/") or not reason.strip():
            raise ConfigError(f"{path}:{number}: expected '<thread url> <why it moved>', got {line!r}")
        moved[url] = reason.strip()
    return moved


def half(excerpt: Excerpt, moved: dict[str, str]) -> str:
    """``tuning`` or ``held_out``: the hash rule, unless the thread was moved to the tuning half."""
    return "tuning" if excerpt.url in moved else hashed_half(excerpt.url)


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
