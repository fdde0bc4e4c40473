"""``triage``: the pulled-back server logs parsed on the control machine: autotune failures, readiness, fatal
errors, a verdict. It runs in the control plane (``reprokit/plan/triage_step.py``), on the record itself.
"""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.step_kinds.base import Number, Output, Part, PinParam, Result, StepInput, StepKind


class AutotuneFailure(Part):
    """One tactic that failed to autotune: its tile, how often, on which ranks, first and last log time."""

    op: str | None = None
    tactic: int | None = None
    tile: str | None = None
    fusion: str | None = None
    swap_ab: bool | None = None
    count: int | None = None
    ranks: list[Any] | None = None
    first: str | None = None
    last: str | None = None


class TimelineEvent(Part):
    """A startup event of the server log, from its first to its last line (the warmup phases read these)."""

    event: str | None = None
    count: Number | None = None
    first: str | None = None
    last: str | None = None
    first_location: str | None = None


class Fatal(Part):
    kind: str | None = None
    at: str | None = None
    message: str | None = None


class TacticAgreement(Part):
    """A tactic that failed at runtime or was predicted to overflow, and whether triage and the static analysis agree."""

    op: str | None = None
    tactic: int | None = None
    tile: str | None = None
    fusion: str | None = None
    swap_ab: bool | None = None
    failed: bool | None = None
    tried: bool | None = None
    predicted: str | None = None
    dynamic_bytes: int | None = None
    static_bytes: int | None = None
    agreement: str | None = None
    says: str | None = None


class Reconciliation(Part):
    """The per-tactic comparison with the static prediction of the same release and arch (triage/reconcile.py)."""

    status: str | None = None
    reason: str | None = None
    agree: bool | None = None
    prediction: dict[str, Any] | None = None
    tactics: list[TacticAgreement] | None = None
    disagreements: list[str] | None = None


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
    autotune_failures: list[AutotuneFailure] | None = None
    autotune_failure_tactics: list[int] | None = None
    reconciliation: Reconciliation | None = None
    notes: list[str] | None = None
    autotune_oom_fallbacks: dict[str, Any] | None = None
    autotune_skipped_summaries: list[Any] | None = None
    fatal: Fatal | None = None
    decided_by: dict[str, Any] | None = None  # the rule of the triage's table that decided, its line, the process
    readiness: dict[str, Any] | None = None
    other_autotune_failures: list[dict[str, Any]] | None = None
    processes: list[dict[str, Any]] | None = None
    survived: list[str] | None = None
    errors: list[dict[str, Any]] | None = None
    timeline: list[TimelineEvent] | None = None
    counts: dict[str, Any] | None = None
    flashinfer: dict[str, Any] | None = None
    files: list[dict[str, Any]] | None = None


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
)
