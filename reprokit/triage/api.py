"""``triage_files``: logs in, a report with a verdict out. What ``tasks.py`` and the kit step call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError
from reprokit.triage.parser import FileStats, parse_file
from reprokit.triage.processes import Process
from reprokit.triage.reconcile import Predict, Reconciliation, reconcile
from reprokit.triage.summary import FailureRow, FatalInfo, Span, Summarizer, TriageSummary
from reprokit.triage.tactics import TableChoice, TacticTable, choose_table
from reprokit.triage.verdict import Decision, LogVerdict, decide, tactic_lines_visible

SCHEMA_VERSION = 1
_TEXT_IN_JSON_CHARS = 16 * 1024
_PROCESSES_IN_JSON = 32


@dataclass
class TriageReport:
    decision: Decision
    summary: TriageSummary
    flashinfer_version: str | None
    flashinfer_version_source: str | None  # 'argument', 'log' (cache paths, banners, pip pins) or None
    table_choice: TableChoice
    reconciliation: Reconciliation

    @property
    def tactic_table(self) -> TacticTable | None:
        return self.table_choice.table

    @property
    def phase(self) -> str | None:
        """How far the server's start got: loading_weights, autotune, cuda_graph_capture, engine_initialized,
        http_server_up, ready, or dead (a fatal error); 'starting' before any of them."""
        return self.summary.phase

    @property
    def verdict(self) -> LogVerdict:
        return self.decision.verdict

    @property
    def exit_code(self) -> int:
        return self.decision.exit_code

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict; the keys the kit's expectations read are at the top level."""
        s = self.summary
        return {
            "schema": SCHEMA_VERSION,
            "verdict": self.verdict.value,
            "exit_code": self.exit_code,
            "reason": self.decision.reason,
            "evidence": _evidence_json(self.decision.evidence, s),
            "phase": s.phase,
            "versions": s.versions.first(),
            "versions_seen": {k: list(v) for k, v in sorted(s.versions.by_component.items())},
            "arch": s.versions.archs[0] if s.versions.archs else None,
            "archs": list(s.versions.archs),
            "ranks": s.ranks,
            "hint": self.decision.hint,
            "env": self.decision.env,
            "ready": s.ready,
            "autotune_failure_tiles": s.failure_tiles,
            "autotune_failures": [_failure_json(row) for row in s.failures],
            "autotune_failure_tactics": sorted({row.tactic for row in s.failures if isinstance(row.tactic, int)}),
            "reconciliation": self.reconciliation.to_json(),
            "notes": s.notes,
            "autotune_oom_fallbacks": _span_json(s.oom_fallbacks),
            "autotune_skipped_summaries": [
                {"op": op, "skipped": s.skipped_totals[op], **_span_json(span)}
                for op, span in sorted(s.skipped_by_op.items())
            ],
            "fatal": None if s.fatal is None else _fatal_json(s.fatal),
            "decided_by": _decided_json(self.decision),
            "readiness": _readiness_json(s),
            "other_autotune_failures": s.other_autotune.to_json(),
            "processes": _processes_json(s),
            "survived": s.survived,
            "errors": [
                {"kind": kind, "message": message, **_span_json(span)}
                for kind, (span, message) in sorted(s.errors.items())
            ],
            "timeline": [{"event": kind, **_span_json(span)} for kind, span in s.timeline],
            "counts": _counts_json(s),
            "flashinfer": self._flashinfer_json(),
            "files": [_file_json(f) for f in s.files],
        }

    def _flashinfer_json(self) -> dict[str, Any]:
        s = self.summary
        return {
            "version": self.flashinfer_version,
            "version_source": self.flashinfer_version_source,
            "tactics_file": str(self.tactic_table.path) if self.tactic_table else None,
            "tactics_source": self.table_choice.source,
            "tactics_reason": self.table_choice.reason,
            "tactics_detail": self.table_choice.detail,
            "logger_lines": s.flashinfer_logger_lines,
            "logger_levels": dict(sorted(s.flashinfer_levels.items())),
            "autotune_ran": s.autotune_ran,
        }


def _failure_json(row: FailureRow) -> dict[str, Any]:
    return {
        "op": row.op,
        "tactic": row.tactic,
        "tile": row.tile,
        "tile_enum": row.tile_enum,
        "fusion": row.fusion,
        "swap_ab": row.swap_ab,
        "tile_source": row.tile_source,
        **_span_json(row.span),
        "unattributed": row.unattributed,
        "errors": [{"message": m, "count": c} for m, c in row.errors.most_common()],
        "instantiation_files": sorted(row.instantiation_files),
        "runners": sorted(row.runners),
        "mapping": row.mapping,
    }


def _process_json(proc: Process) -> dict[str, Any]:
    exc = proc.exception
    return {
        "process": proc.key, "role": proc.role, "stack": sorted(proc.stack), "serving": proc.serving,
        "state": "dead" if proc.dead else "alive", "why": proc.why(), "lines": proc.lines,
        "first_line": proc.first_line, "last_line": proc.last_line, "last_text": proc.last_text,
        "exception": None if exc is None else {"line": exc.line, "text": exc.text, "how": exc.how,
                                               "exception": exc.exception, "last_line": exc.last_line,
                                               "request_handler": exc.request_handler},
    }


def _processes_json(s: TriageSummary) -> list[dict[str, Any]]:
    """Each file's processes, the dead first, at most ``_PROCESSES_IN_JSON`` of them."""
    rows = [{"file": f.path, **_process_json(p)} for f in s.files for p in f.processes.processes.values()]
    rows.sort(key=lambda r: (r["state"] != "dead", r["file"], r["first_line"]))
    return rows[:_PROCESSES_IN_JSON]


def _decided_json(decision: Decision) -> dict[str, Any] | None:
    d = decision.decided_by
    if d is None:
        return None
    return {"rule": d.rule, "verdict": decision.verdict.value, "location": d.location, "text": d.text, "why": d.why,
            "process": None if d.process is None else _process_json(d.process)}


def _readiness_json(s: TriageSummary) -> dict[str, Any] | None:
    best = s.readiness.best()
    if best is None:
        return None
    how, seen = best
    return {"by": how, "first_location": seen.first, "first_text": seen.first_text, "last_location": seen.last,
            "count": seen.count, "seen": sorted(s.readiness.by)}


def _fatal_json(fatal: FatalInfo) -> dict[str, Any]:
    return {
        "kind": fatal.kind,
        "family": fatal.family,
        "process": fatal.process,
        "cause": fatal.cause,
        "message": fatal.message,
        "exception": fatal.exception,
        "at": fatal.at,
        "rank": fatal.rank,
        "location": fatal.location,
        "ended_by_eof": fatal.ended_by_eof,
        "count_by_kind": dict(sorted(fatal.count_by_kind.items())),
        "traceback": fatal.traceback[:_TEXT_IN_JSON_CHARS] if fatal.traceback else None,
        "traceback_truncated": fatal.traceback_truncated
        or bool(fatal.traceback and len(fatal.traceback) > _TEXT_IN_JSON_CHARS),
    }


def _counts_json(s: TriageSummary) -> dict[str, Any]:
    lines_by_format: dict[str, int] = {}
    for stats in s.files:
        for name, count in stats.lines_by_format.items():
            lines_by_format[name] = lines_by_format.get(name, 0) + count
    return {
        "files": len(s.files),
        "lines": s.lines,
        "unknown_lines": s.unknown_lines,
        "truncated_lines": sum(f.read.truncated_lines for f in s.files),
        "records_after_progress_bar": sum(f.records_after_progress_bar for f in s.files),
        "records_mid_line": sum(f.records_mid_line for f in s.files),
        "lines_by_format": dict(sorted(lines_by_format.items())),
        "events": dict(sorted(s.events_by_kind.items())),
    }


def _file_json(f: FileStats) -> dict[str, Any]:
    return {
        "path": f.path,
        "gzip": f.read.gzip,
        "bytes": f.read.bytes_read,
        "lines": f.lines,
        "unknown_lines": f.unknown_lines,
        "truncated_lines": f.read.truncated_lines,
        "ends_mid_line": f.read.ends_mid_line,
        "read_error": f.read.read_error,
        "ranks": sorted(f.ranks),
    }


def _span_json(span: Span) -> dict[str, Any]:
    return {
        "count": span.count,
        "ranks": sorted(span.ranks),
        "first": span.first_at,
        "last": span.last_at,
        "first_location": span.first_location,
    }


def _evidence_json(location: str | None, s: TriageSummary) -> dict[str, Any] | None:
    if location is None:
        return None
    path, _, line = location.rpartition(":")
    text = None
    if s.fatal is not None and location == s.fatal.location:
        text = s.fatal.message
    elif location == s.ready_location:
        text = s.ready_text
    elif s.files and path == s.files[-1].path and int(line) == s.files[-1].lines:
        text = s.files[-1].last_line
    return {"location": location, "file": path, "line": int(line), "text": text}


def triage_files(
    paths: list[Path], flashinfer_version: str | None = None, tactics_file: Path | None = None,
    compute_tables: bool = False, predict: Predict | None = None,
) -> TriageReport:
    """Triage server logs (plain or gzip, any size, ranks interleaved or one file per rank).

    The FlashInfer release (``flashinfer_version``, else the one the log names) picks its own
    tactic table: shipped, cached, or with ``compute_tables`` computed from the release's wheel
    (pip + nvcc, about a minute) and cached; ``tactics_file`` overrides it. Without a table a
    tactic is reported unmapped with the reason. ``predict`` (release, arch -> the static prediction, or None)
    gives what the static analysis says of the same tactics, set beside the failures per tactic
    (``reconciliation``). Raises ``ConfigError`` for a path that cannot be
    read or a malformed tactic table.
    """
    if not paths:
        raise ConfigError("no log file given; pass one or more server logs")
    for path in paths:
        if not Path(path).is_file():
            reason = "is a directory; pass the log files inside it" if Path(path).is_dir() else "no such file"
            raise ConfigError(f"{path}: {reason}")
    summarizer = Summarizer()
    for path in paths:
        parsed = parse_file(Path(path))
        for event in parsed.events:
            summarizer.add(event)
        summarizer.add_file(parsed.stats)
    seen = summarizer.versions
    logged = seen.by_component.get("flashinfer", [])
    versions = [flashinfer_version] if flashinfer_version else logged
    source = "argument" if flashinfer_version else ("log" if logged else None)
    choice = choose_table(versions, seen.archs[0] if seen.archs else None, tactics_file=tactics_file,
                          compute=compute_tables)
    summary = summarizer.summary(choice)
    version = versions[0] if len(set(versions)) == 1 else None
    arch = seen.archs[0] if seen.archs else None
    return TriageReport(decide(summary, version), summary, version, source, choice,
                        _reconciled(summary, version, arch, predict))


def _reconciled(summary: TriageSummary, version: str | None, arch: str | None, predict: Predict | None) -> Reconciliation:
    """The failures against the static prediction of the same release and arch, or why they were not compared."""
    prediction, reason = None, None
    if predict is None:
        reason = "no static prediction was looked up"
    elif version is None:
        reason = "the FlashInfer release is unknown (the log names none, or several); pass --flashinfer"
    else:
        prediction = predict(version, arch or "sm120")
        if prediction is None:
            reason = f"no static prediction for FlashInfer {version} on {arch or 'sm120'}"
    return reconcile(summary.failures, summary.tried_tactics, tactic_lines_visible(summary, version), prediction, reason)


def current_phase(paths: list[Path]) -> str | None:
    """How far a (live) server log has got: a phase name of ``TriageReport.phase``, e.g. for a progress line."""
    return triage_files(paths).phase
