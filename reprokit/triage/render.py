"""A triage report as plain text tables, for a terminal or a CI log."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from reprokit.triage.api import TriageReport

_TRACEBACK_LINES_SHOWN = 40
_WIDTH_CHARS = 180


def _table(title: str, *columns: str, wrap: tuple[str, ...] = ()) -> Table:
    """Short columns never wrap; only the free-text ones (``wrap``) fold."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, no_wrap=column not in wrap, overflow="fold")
    return table


def _ranks(ranks: set[str], unattributed: int = 0) -> str:
    shown = ", ".join(sorted(ranks)) if len(ranks) <= 8 else f"{len(ranks)} ranks"
    if unattributed:
        shown = f"{shown} (+{unattributed} unattributed)" if shown else f"{unattributed} unattributed"
    return shown or "-"


def render_table(report: TriageReport) -> str:
    """Verdict, autotune failures, fatal error, timeline and counts as readable text."""
    s = report.summary
    buffer = io.StringIO()
    console = Console(file=buffer, width=_WIDTH_CHARS, no_color=True, highlight=False, emoji=False)
    console.print(f"verdict: {report.verdict.value} (exit {report.exit_code})")
    console.print(f"reason:  {report.decision.reason}", markup=False)
    if report.decision.evidence:
        console.print(f"evidence: {report.decision.evidence}", markup=False)
    versions = ", ".join(f"{name} {version}" for name, version in s.versions.first().items())
    console.print(f"phase:   {s.phase or '-'}; versions in the log: {versions or 'none'}"
                  + (f"; arch {s.versions.archs[0]}" if s.versions.archs else ""), markup=False)
    if report.decision.hint:
        console.print(f"hint:    {report.decision.hint}")

    if s.failures:
        table = _table(
            f"autotune failures ({s.failure_count}, non-fatal: the tactic was skipped)",
            "op", "tactic", "tile", "fusion", "swap_ab", "count", "ranks", "first", "last", "mapping", "error",
            wrap=("ranks", "mapping", "error"),
        )
        for row in s.failures:
            table.add_row(
                row.op or "?", str(row.tactic), row.tile or "?", row.fusion or "?",
                "?" if row.swap_ab is None else str(row.swap_ab).lower(), str(row.span.count),
                _ranks(row.span.ranks, row.unattributed), row.span.first_at or "-", row.span.last_at or "-",
                "table" if row.mapping.get("status") == "mapped" else (row.mapping.get("reason") or "-"),
                row.errors.most_common(1)[0][0] if row.errors else "",
            )
        console.print(table)

    for note in s.notes:
        console.print(f"note: {note}", markup=False)

    if s.skipped_by_op:
        table = _table("FlashInfer 'Skipped N unsupported tactic(s)' summaries", "op", "skipped", "lines", "ranks",
                       wrap=("ranks",))
        for op, span in sorted(s.skipped_by_op.items()):
            table.add_row(op, str(s.skipped_totals[op]), str(span.count), _ranks(span.ranks))
        console.print(table)

    if s.fatal is not None:
        fatal = s.fatal
        console.print(f"fatal: {fatal.kind} at {fatal.location} ({fatal.at or 'no time'}, rank {fatal.rank or '-'})")
        console.print(f"  cause: {fatal.cause or '-'}; exception: {fatal.exception or fatal.message}")
        if fatal.traceback:
            lines = fatal.traceback.split("\n")
            for line in lines[:_TRACEBACK_LINES_SHOWN]:
                console.print(f"  | {line}", markup=False)
            if len(lines) > _TRACEBACK_LINES_SHOWN:
                console.print(f"  | ... {len(lines) - _TRACEBACK_LINES_SHOWN} more line(s)")

    if s.errors:
        table = _table("other errors", "kind", "count", "first at", "message", wrap=("message",))
        for kind, (span, message) in sorted(s.errors.items()):
            table.add_row(kind, str(span.count), span.first_location or "-", message)
        console.print(table)

    if s.timeline:
        table = _table("timeline", "event", "count", "first", "last", "ranks", wrap=("ranks",))
        for kind, span in s.timeline:
            last = span.last_at if span.last_at != span.first_at else ""
            table.add_row(kind, str(span.count), span.first_at or "-", last, _ranks(span.ranks))
        console.print(table)

    truncated = sum(f.read.truncated_lines for f in s.files)
    console.print(
        f"{len(s.files)} file(s), {s.lines} line(s), {s.unknown_lines} unknown, {truncated} truncated; "
        f"FlashInfer {report.flashinfer_version or 'version unknown'}"
        + (f", tactics from {report.tactic_table.path}" if report.tactic_table
           else f", no tactic table ({report.table_choice.detail})")
    , markup=False)
    return buffer.getvalue()


def render_explain(report: TriageReport) -> str:
    """The chain behind the verdict: the deciding rule, its line, the process and its last record, why dead or alive,
    then the rules above it that did not match and every process the log shows."""
    from reprokit.triage.rules import RULES

    decided = report.decision.decided_by
    lines = [f"verdict: {report.verdict.value} (exit {report.exit_code})"]
    if decided is None:
        return "\n".join(lines)
    lines.append(f"rule:    {decided.rule} (rule {[r.name for r in RULES].index(decided.rule) + 1} of {len(RULES)}): "
                 f"{next(r.says for r in RULES if r.name == decided.rule)}")
    lines.append(f"line:    {decided.location or '-'}" + (f": {decided.text}" if decided.text else ""))
    lines.append(f"why:     {decided.why}")
    proc = decided.process
    if proc is not None:
        stack = ", ".join(sorted(proc.stack)) or "unknown"
        lines.append(f"process: {proc.key} ({proc.role}; stack {stack}; lines {proc.first_line}-{proc.last_line})")
        lines.append(f"  last record: line {proc.last_line}: {proc.last_text}")
        lines.append(f"  {proc.why()}")
    readiness = report.summary.readiness.best()
    if readiness is not None:
        how, seen = readiness
        lines.append(f"ready by: {how} (first at {seen.first}: {seen.first_text}; {seen.count} line(s))")
    earlier = [r.name for r in RULES[:[r.name for r in RULES].index(decided.rule)]]
    if earlier:
        lines.append(f"not matched before it: {', '.join(earlier)}")
    for note in report.summary.survived:
        lines.append(f"survived: {note}")
    lines.append("processes:")
    for stats in report.summary.files:
        for p in stats.processes.processes.values():
            lines.append(f"  {stats.path}: {p.key} ({p.role}, {'dead' if p.dead else 'alive'}): {p.why()}")
    return "\n".join(lines)
