"""The triage kind's sections of the reports, drawn from its result model (``reprokit/step_kinds/triage.py``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from reprokit.draw.svg import Linear, Svg, is_number, nice_ticks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.report.templating import render_part
from reprokit.step_kinds.base import given
from reprokit.step_kinds.triage import (
    KIND,  # noqa: F401 - the kind these sections draw
    TriageResult,
)
from reprokit.triage.reconcile import Agreement, Comparison

TIME_FORMATS = ("%Y-%m-%d %H:%M:%S,%f", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f",
                "%Y-%m-%dT%H:%M:%S")


def parse_log_time(text: Any) -> dt.datetime | None:
    """A log timestamp as the triage writes it (``2026-02-19 10:05:14,016`` or without the fraction)."""
    if not isinstance(text, str):
        return None
    for fmt in TIME_FORMATS:
        try:
            return dt.datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def timeline_chart(result: TriageResult) -> str:
    """One row per triage timeline event: a span from its first to its last occurrence, seconds from the first event."""
    entries = []
    for event in result.timeline or []:
        first, last = parse_log_time(event.first), parse_log_time(event.last)
        if first is not None:
            entries.append((event, first, last if last is not None and last >= first else first))
    if not entries:
        return ""
    start = min(e[1] for e in entries)
    end_s = max(max((e[2] - start).total_seconds() for e in entries), 1.0)
    label_w, plot_w, row_h, top, bottom = 230, 560, 20, 12, 40
    ticks = nice_ticks(end_s, 6)
    svg = Svg("timeline-chart", label_w + plot_w + 80, top + row_h * len(entries) + bottom,
              f"Warmup and autotune timeline from {start.isoformat(sep=' ')}")
    x = Linear(0, ticks[-1], label_w, label_w + plot_w)
    plot_bottom = top + row_h * len(entries)
    for tick in ticks:
        svg.line(x(tick), top, x(tick), plot_bottom, "grid")
        svg.text(x(tick), plot_bottom + 14, f"{tick:g} s", "tick", "middle")
    svg.text(label_w + plot_w / 2, plot_bottom + 32, f"seconds after {start.isoformat(sep=' ')}", "axis-label", "middle")
    for index, (event, first, last) in enumerate(entries):
        y = top + index * row_h
        name = str(given(event.event, "?"))
        x0, x1 = x((first - start).total_seconds()), x((last - start).total_seconds())
        kind = _event_class(name)
        tip = f"{name}: {given(event.count, '?')} line(s), {event.first} .. {event.last}"
        if event.first_location:
            tip += f" (first at {event.first_location})"
        svg.text(label_w - 8, y + row_h - 6, name, "row-label mono", "end")
        svg.rect(x0, y + 4, max(x1 - x0, 3), row_h - 8, f"span {kind}", tip, event=name, count=event.count)
        if is_number(event.count) and event.count > 1:
            svg.text(max(x1, x0 + 3) + 4, y + row_h - 6, f"x{event.count}", "value")
    return svg.render()


def _event_class(name: str) -> str:
    if any(word in name for word in ("fail", "skip", "error", "fatal")):
        return "bad"
    if name in ("ready", "uvicorn_startup_complete"):
        return "good"
    return "neutral"


def html(step: ReportStep) -> list[Markup]:
    """The verdict, the autotune failures per tactic, the fatal line and the warmup timeline."""
    result: TriageResult = step.result
    failures = result.autotune_failures or []
    rows = [[str(failure.op or "").rsplit("::", 1)[-1], (failure.tactic, "num"), (failure.tile, "mono"), failure.fusion,
             "yes" if failure.swap_ab else "no" if failure.swap_ab is not None else "", (failure.count, "num"),
             ", ".join(map(str, failure.ranks or [])) or "not logged", failure.first, failure.last]
            for failure in failures]
    return render_part("kind_sections/triage.html", result=result, failures=rows,
                       failure_lines=sum(f.count or 0 for f in failures), reconciliation=reconciliation(result),
                       timeline=timeline_chart(result))


@dataclass(frozen=True)
class Reconciliation:
    """The triage's failed tactics beside the static prediction, as the section shows them."""

    not_compared: str | None = None  # why they were not compared
    source: str = "?"  # where the prediction came from
    rows: list[list[Any]] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    word: str = ""  # they agree, disagree on N tactic(s), cannot tell


def reconciliation(result: TriageResult) -> Reconciliation | None:
    """Each tactic that failed or was predicted to overflow, with both diagnoses and whether they agree."""
    found = result.reconciliation
    if found is None:
        return None
    if found.status != Comparison.COMPARED:
        return Reconciliation(not_compared=given(found.reason, "no prediction"))
    source = (found.prediction or {}).get("source", "?")
    rows, classes = [], []
    for t in found.tactics or []:
        rows.append([str(t.op or "").rsplit("::", 1)[-1], (t.tactic, "num"), (t.tile, "mono"), t.fusion,
                     "yes" if t.swap_ab else "no" if t.swap_ab is not None else "",
                     "yes" if t.failed else "no",
                     "yes" if t.tried else "no" if t.tried is not None else "unknown",
                     t.predicted, (t.dynamic_bytes, "num"), (t.static_bytes, "num"), t.agreement, t.says])
        classes.append("bad" if t.agreement == Agreement.DISAGREE else "")
    word = {True: "agree", False: f"disagree on {len(found.disagreements or [])} tactic(s)", None: "cannot tell"}[found.agree]
    return Reconciliation(source=source, rows=rows, classes=classes, word=word)


DEATH_TRACEBACK_LINES = 6  # the end of the traceback: what was raised, and from where


def cause(step: ReportStep) -> list[str]:
    """What the server logs say caused it: the death first (its line, the process, the traceback's last lines), else
    the tactics that failed to autotune, with one line that shows it."""
    result: TriageResult = step.result
    fatal = result.fatal
    if fatal is not None:
        extra = fatal.model_extra or {}
        where = extra.get("location") or "the log"
        process = f", process {extra['process']}" if extra.get("process") else ""
        what = extra.get("exception") or fatal.message or fatal.kind
        lines = [f"the server died at {where}{process}: {what}"]
        tail = [line for line in str(extra.get("traceback") or "").splitlines() if line.strip()]
        return lines + [f"  | {line}" for line in tail[-DEATH_TRACEBACK_LINES:]]
    failures = result.autotune_failures or []
    if not failures:
        return []
    tiles = ", ".join(dict.fromkeys(f.tile for f in failures if f.tile)) or "tiles unknown"
    lines = sum(f.count or 0 for f in failures)
    example = (result.evidence or {}).get("location")
    first = next((f.model_extra.get("first_location") for f in failures if (f.model_extra or {}).get("first_location")),
                 None)
    shown_at = first or example
    found = result.reconciliation
    agreement = []
    if found is not None and found.agree is False:
        agreement = [f"the triage and the static analysis disagree on {len(found.disagreements or [])} tactic(s)"
                     " (the report's reconciliation table)"]
    return [f"triage: {len(failures)} tactic(s) failed to autotune ({tiles}; {lines} line(s))"
            + (f", e.g. {shown_at}" if shown_at else "")] + agreement


SECTIONS = (Section("details", html=html), Section("headline", cause=cause))
