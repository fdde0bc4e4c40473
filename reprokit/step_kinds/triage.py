"""``triage``: the pulled-back server logs parsed on the control machine: autotune failures, readiness, fatal
errors, a verdict. It runs in the control plane (``reprokit/plan/triage_step.py``), on the record itself.
"""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.report.charts import timeline_chart
from reprokit.report.svg import esc
from reprokit.report.tables import figure, html_table
from reprokit.step_kinds.base import Output, PinParam, ReportStep, Result, Section, StepInput, StepKind


class TriageResult(Result):
    logs: list[str] | None = None
    schema_: int | None = pydantic.Field(None, alias="schema")  # pydantic's BaseModel has a `schema` method
    verdict: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    evidence: dict[str, Any] | None = None
    phase: str | None = None
    versions: dict[str, Any] | None = None
    versions_seen: dict[str, Any] | None = None
    arch: str | None = None
    archs: list[str] | None = None
    ranks: list[str] | None = None
    hint: str | None = None
    env: dict[str, Any] | None = None
    ready: bool | None = None
    autotune_failure_tiles: list[str] | None = None
    autotune_failures: list[dict[str, Any]] | None = None
    notes: list[str] | None = None
    autotune_skipped_summaries: list[Any] | None = None
    fatal: dict[str, Any] | None = None
    errors: list[dict[str, Any]] | None = None
    timeline: list[dict[str, Any]] | None = None
    counts: dict[str, Any] | None = None
    flashinfer: dict[str, Any] | None = None
    files: list[dict[str, Any]] | None = None


def html(step: ReportStep) -> list[str]:
    """The verdict, the autotune failures per tactic, the fatal line and the warmup timeline."""
    result = step.result
    out = ['<h2 id="triage">Server log triage</h2>',
           f"<p><strong>{esc(result.get('verdict'))}</strong>: {esc(result.get('reason', ''))}</p>"]
    if result.get("hint"):
        out.append(f'<p class="note">{esc(result["hint"])}</p>')
    rows = []
    for failure in result.get("autotune_failures") or []:
        if not isinstance(failure, dict):
            continue
        ranks = failure.get("ranks") or []
        rows.append([str(failure.get("op") or "").rsplit("::", 1)[-1], (failure.get("tactic"), "num"),
                     (failure.get("tile"), "mono"), failure.get("fusion"),
                     "yes" if failure.get("swap_ab") else "no" if failure.get("swap_ab") is not None else "",
                     (failure.get("count"), "num"), ", ".join(map(str, ranks)) or "not logged",
                     failure.get("first"), failure.get("last")])
    if rows:
        total = sum(f.get("count") or 0 for f in result["autotune_failures"] if isinstance(f, dict))
        out += [f"<h3>Autotune failures: {len(rows)} tactic(s), {total} failure line(s)</h3>", html_table(
            ["op", "tactic", "tile", "fusion", "swap_ab", "count", "ranks", "first", "last"], rows, "autotune-failures")]
    fatal = result.get("fatal")
    if isinstance(fatal, dict):
        out.append(f'<p class="note">Fatal ({esc(fatal.get("kind"))}) at {esc(fatal.get("at"))}: {esc(fatal.get("message"))}</p>')
    out += figure(timeline_chart(result),
                  "Warmup and autotuning as the server logged them: each event from its first to its last line (all ranks), "
                  "autotune failures in red, readiness in green.")
    return out


KIND = StepKind(
    name="triage",
    where="control",
    order=70,
    module="reprokit.plan.triage_step",
    summary="parse the pulled-back server logs: autotune failures, readiness, fatal errors, verdict",
    implemented=True,
    default_timeout_s=600,
    param_keys=("logs_from", "flashinfer"),
    pin_params=(PinParam("flashinfer", pin="flashinfer-python"),),  # the tactic table of that release
    inputs=(StepInput("logs", "the server logs of serve", from_step="serve", files=("**/*.log", "**/*.log.gz"),
                      step_param="logs_from"),),
    outputs=(Output("result.json", "the triage's verdict, its evidence and the warmup timeline"),),
    result=TriageResult,
    sections=(Section("details", html=html),),
)
