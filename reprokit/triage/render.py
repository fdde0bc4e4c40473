"""A triage report as plain text, drawn at the width of the terminal it is printed on (80 columns in a pipe).

A table drawn wider than the terminal wraps mid-border, so every table here is drawn at the width it is given:
short columns never wrap, the one free-text column is cut with an ellipsis, and what every row would repeat (the
same error text, the ops' common prefix) is said once, under the table. A death comes first, with the last lines of
its traceback: that is what a person reads the triage of a fatal log for. The next step, where there is one, is the
last line, spelt as a command.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.table import Table

from reprokit.triage.api import TriageReport
from reprokit.triage.summary import FailureRow
from reprokit.triage.verdict import LogVerdict

TRACEBACK_TAIL_LINES = 12  # the end of a traceback says what died; the whole of it is in --json and the log
DEFAULT_WIDTH_CHARS = 80


@dataclass
class Column:
    """One column of a table: its cells, and whether it must be shown (``fixed``), may be left out where the width is
    short (``optional``, dropped from the right), or takes what width is left, cut with an ellipsis (``free``)."""

    header: str
    cells: list[str] = field(default_factory=list)
    kind: str = "fixed"

    @property
    def width_chars(self) -> int:
        return max([len(self.header), *(len(c) for c in self.cells)])


FREE_MIN_CHARS = 12
GAP_CHARS = 3  # between two columns of a SIMPLE_HEAD table without edge padding


def draw(console: Console, title: str, columns: list[Column]) -> None:
    """``title`` as a line, then the table, every row one line at the console's width: optional columns leave from
    the right until the rest fit, the free one takes what is left."""
    shown = list(columns)

    def needed() -> int:
        return (sum(c.width_chars if c.kind != "free" else FREE_MIN_CHARS for c in shown)
                + GAP_CHARS * (len(shown) - 1))

    while needed() > console.width and any(c.kind == "optional" for c in shown):
        shown.remove([c for c in shown if c.kind == "optional"][-1])
    console.print(title, markup=False, soft_wrap=True)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in shown:
        free = column.kind == "free"
        table.add_column(column.header, no_wrap=True, overflow="ellipsis", ratio=1 if free else None,
                         min_width=None if free else column.width_chars)
    for row in zip(*(c.cells for c in shown), strict=True):
        table.add_row(*row)
    console.print(table)


def _ranks(ranks: set[str], unattributed: int = 0) -> str:
    shown = ", ".join(sorted(ranks)) if len(ranks) <= 4 else f"{len(ranks)} ranks"
    if unattributed:
        shown = f"{shown} (+{unattributed} unattributed)" if shown else f"{unattributed} unattributed"
    return shown or "-"


def _common_prefix(names: list[str]) -> str:
    """The ops' shared namespace (``trtllm::fused_moe::``), said once in the title rather than on every row."""
    if len(names) < 2:
        return ""
    first, last = min(names), max(names)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    prefix = first[:size]
    return prefix[: prefix.rfind("::") + 2] if "::" in prefix else ""


def _example(location: str | None, single_file: bool) -> str:
    """Where one of the row's lines is: ``line N`` of the one log (named under the tables), else ``file:N``."""
    if not location:
        return "-"
    path, _, line = location.rpartition(":")
    return f"line {line}" if single_file else f"{path.rsplit('/', 1)[-1]}:{line}"


def _error_of(row: FailureRow) -> str:
    return row.errors.most_common(1)[0][0] if row.errors else ""


def _failures(console: Console, report: TriageReport) -> None:
    s = report.summary
    ops = [row.op or "?" for row in s.failures]
    prefix = _common_prefix(ops)
    errors = Counter(_error_of(row) for row in s.failures)
    one_error = len(errors) == 1
    single_file = len(s.files) == 1
    rows = s.failures
    columns = [
        Column("op", [op[len(prefix):] for op in ops]),
        Column("tactic", [str(row.tactic) for row in rows]),
        Column("tile", [row.tile or "?" for row in rows]),
        Column("swap_ab", ["?" if row.swap_ab is None else str(row.swap_ab).lower() for row in rows]),
        Column("count", [str(row.span.count) for row in rows]),
        Column("ranks", [_ranks(row.span.ranks, row.unattributed) for row in rows], "optional"),
        Column("example line", [_example(row.span.first_location, single_file) for row in rows]),
        Column("fusion", [row.fusion or "?" for row in rows], "optional"),
        Column("first", [row.span.first_at or "-" for row in rows], "optional"),
        Column("last", [row.span.last_at or "-" for row in rows], "optional"),
        Column("mapping", ["table" if row.mapping.get("status") == "mapped" else (row.mapping.get("reason") or "-")
                           for row in rows], "optional"),
    ]
    if not one_error:
        columns.append(Column("error", [_error_of(row) for row in rows], "free"))
    draw(console, f"autotune failures: {s.failure_count} line(s) over {len(rows)} tactic(s), each skipped by the "
                  f"autotuner" + (f" (ops {prefix}...)" if prefix else ""), columns)
    if one_error and next(iter(errors)):
        console.print(f"error of every row: {next(iter(errors))}", markup=False, soft_wrap=True)


def _death(console: Console, report: TriageReport) -> None:
    fatal = report.summary.fatal
    if fatal is None:
        return
    process = f", process {fatal.process}" if fatal.process else ""
    console.print(f"died:    {fatal.family} at {fatal.location} ({fatal.at or 'no time'}, rank {fatal.rank or '-'}"
                  f"{process})", markup=False, soft_wrap=True)
    console.print(f"  cause: {fatal.cause or '-'}; exception: {fatal.exception or fatal.message}", markup=False,
                  soft_wrap=True)
    if fatal.traceback:
        lines = fatal.traceback.split("\n")
        if len(lines) > TRACEBACK_TAIL_LINES:
            console.print(f"  | ... {len(lines) - TRACEBACK_TAIL_LINES} line(s) before (all of it: --json, or the log)")
        for line in lines[-TRACEBACK_TAIL_LINES:]:
            console.print(f"  | {line}", markup=False, soft_wrap=True)


def next_step(report: TriageReport, program: str = "invoke") -> str | None:
    """What to do with this verdict, as a command where there is one: the fix for failing tactics, the log level for
    hidden ones, the rest of the log for one that ends too early."""
    s = report.summary
    verdict = report.verdict
    if s.failures and verdict in (LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES, LogVerdict.FATAL):
        version = report.flashinfer_version or "VERSION"
        arch = s.versions.archs[0] if s.versions.archs else "ARCH"
        return (f"`{program} fix --flashinfer {version} --arch {arch}` keeps these tactics from being tried "
                "(the workaround, checked without a GPU)")
    if report.decision.hint:
        return report.decision.hint
    if verdict is LogVerdict.FATAL:
        return f"reproduce it on a host: `{program} repro KIT` (`{program} kits` lists the kits), then `{program} report --upstream RUN`"
    if verdict is LogVerdict.NOT_READY:
        return "give the whole log (every rank's file), or collect it again once the server is up or dead"
    return None


def reconciliation_line(report: TriageReport) -> str | None:
    """Whether the failing tactics are the ones the static analysis of the same release predicts (triage/reconcile.py),
    in one line for the headline; None where there is nothing to say (no failure, nothing predicted)."""
    found = report.reconciliation
    if found.prediction is None:
        return f"not compared with the static analysis: {found.reason}" if found.reason and report.summary.failures else None
    if not found.rows:
        return None
    disagreements = found.disagreements
    if found.agree:
        return (f"the static analysis of the same release agrees on all {len(found.rows)} tactic(s)"
                f" ({found.prediction.source})")
    if disagreements:
        more = f" (and {len(disagreements) - 1} more)" if len(disagreements) > 1 else ""
        return f"the static analysis disagrees on {len(disagreements)} tactic(s): {disagreements[0]}{more}"
    return "the static analysis cannot tell for every tactic (the log level hides whether some were tried)"


def render_table(report: TriageReport, width_chars: int = DEFAULT_WIDTH_CHARS, program: str = "invoke",
                 reconciliation: str | None = None) -> str:
    """Verdict, the death first, autotune failures (one row per op x tactic x tile), timeline, counts, next step.

    ``reconciliation``: the line saying whether the failing tactics agree with the static analysis (by default the
    report's own reconciliation, ``reconciliation_line``), printed under the verdict as part of the headline."""
    s = report.summary
    buffer = io.StringIO()
    console = Console(file=buffer, width=width_chars, no_color=True, highlight=False, emoji=False, soft_wrap=False)
    say = lambda text: console.print(text, markup=False, soft_wrap=True)  # noqa: E731 - a plain line; the terminal folds it
    say(f"verdict: {report.verdict.value} (exit {report.exit_code})")
    say(f"reason:  {report.decision.reason}")
    reconciliation = reconciliation or reconciliation_line(report)
    if reconciliation:
        say(f"static:  {reconciliation}")
    if report.decision.evidence:
        say(f"line:    {report.decision.evidence}")
    versions = ", ".join(f"{name} {version}" for name, version in s.versions.first().items())
    say(f"phase:   {s.phase or '-'}; versions in the log: {versions or 'none'}"
        + (f"; arch {s.versions.archs[0]}" if s.versions.archs else ""))
    _death(console, report)

    if s.failures:
        _failures(console, report)

    for note in s.notes:
        say(f"note: {note}")

    if s.skipped_by_op:
        ops = sorted(s.skipped_by_op.items())
        draw(console, "FlashInfer 'Skipped N unsupported tactic(s)' summaries", [
            Column("op", [op for op, _ in ops]), Column("skipped", [str(s.skipped_totals[op]) for op, _ in ops]),
            Column("lines", [str(span.count) for _, span in ops]),
            Column("ranks", [_ranks(span.ranks) for _, span in ops], "free")])

    if s.errors:
        errors = sorted(s.errors.items())
        draw(console, "other errors", [
            Column("kind", [kind for kind, _ in errors]), Column("count", [str(span.count) for _, (span, _) in errors]),
            Column("first at", [_example(span.first_location, len(s.files) == 1) for _, (span, _) in errors]),
            Column("message", [message for _, (_, message) in errors], "free")])

    if s.timeline:
        draw(console, "timeline", [
            Column("event", [kind for kind, _ in s.timeline]), Column("count", [str(span.count) for _, span in s.timeline]),
            Column("first", [span.first_at or "-" for _, span in s.timeline]),
            Column("ranks", [_ranks(span.ranks) for _, span in s.timeline], "optional"),
            Column("last", [span.last_at if span.last_at != span.first_at else "" for _, span in s.timeline],
                   "optional")])

    truncated = sum(f.read.truncated_lines for f in s.files)
    say(f"{len(s.files)} file(s), {s.lines} line(s), {s.unknown_lines} unknown, {truncated} truncated; "
        f"FlashInfer {report.flashinfer_version or 'version unknown'}"
        + (f", tactics from {report.tactic_table.path}" if report.tactic_table
           else f", no tactic table ({report.table_choice.detail})"))
    step = next_step(report, program)
    if step:
        say(f"next:    {step}")
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
