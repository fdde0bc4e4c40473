"""The two diagnoses side by side, per tactic: what failed at runtime against what the static analysis predicted.

Triage reads which autotune tactics failed; the static shared-memory analysis says, for the same FlashInfer
release, arch and dtype, which kernels cannot start (``sizeof(SharedStorage)`` over the arch's capacity). Each
is a diagnosis of the same thing, so they must agree tactic by tactic. Where they do not, someone must be told:
a tactic that failed though predicted to fit means the prediction is wrong or the cause is not shared memory; a
tactic predicted to overflow that the autotuner profiled without a failure means the prediction is wrong; one
never tried says the run did not reach it (a narrower warmup, a blocklist, a skipped op).

The prediction comes from the kit's own ``static-smem`` step (its result.json: every tactic with its bytes) or
from the fit table's cell of that release (the failing tactics with their bytes; the others fit). This module is
pure: the caller finds the prediction and passes it in (``Prediction``), and gets back data for the verdict's
JSON, the report and the console.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reprokit.triage.spans import FailureRow
from reprokit.workloads.facts.smem_fit import KernelFit


class Predicted(StrEnum):
    """What the static analysis predicts of one tactic (its kernels' ``KernelFit``, the largest deciding)."""

    FITS = "fits"
    EXCEEDS = "exceeds"
    REJECTED = "rejected"  # the dispatcher has no such kernel (the analysis's ``unsupported``)


@dataclass(frozen=True)
class PredictedTactic:
    """One tactic as the static analysis sees it."""

    op: str
    tactic: int
    tile: str | None
    fusion: str | None
    swap_ab: bool | None
    verdict: Predicted
    dynamic_bytes: int | None  # sizeof(SharedStorage): what the launch asks as dynamic shared memory
    static_bytes: int | None = None  # the kernel's static __shared__ (0 for CUTLASS's kernels; None: not known)

    @property
    def total_bytes(self) -> int | None:
        if self.dynamic_bytes is None:
            return None
        return self.dynamic_bytes + (self.static_bytes or 0)


@dataclass(frozen=True)
class Prediction:
    """The static prediction of one FlashInfer release for one arch and dtype."""

    source: str  # where it comes from, e.g. 'steps/static-smem/result.json' or 'fit table 0.6.3/sm120/nvfp4'
    flashinfer: str
    arch: str
    dtype: str
    capacity_bytes: int | None
    tactics: dict[int, PredictedTactic]


Predict = Callable[[str, str], "Prediction | None"]  # (flashinfer release, arch) -> its prediction, or None


def _bytes(value: int | None) -> str:
    """98 304 B, as the docs write bytes."""
    return "? B" if value is None else f"{value:,} B".replace(",", " ")


def prediction_from_static_result(result: dict[str, Any], source: str) -> Prediction:
    """A static-smem step's result.json: one row per tactic and output dtype; a tactic overflows when any of its
    kernels does (the largest is kept)."""
    tactics: dict[int, PredictedTactic] = {}
    for row in result.get("rows") or []:
        tactic = row.get("tactic")
        if not isinstance(tactic, int):
            continue
        verdict = {KernelFit.FITS: Predicted.FITS, KernelFit.EXCEEDS: Predicted.EXCEEDS}.get(row.get("verdict"),
                                                                                        Predicted.REJECTED)
        dynamic = row.get("kernel_smem_bytes")
        static = row.get("static_smem_bytes", 0 if dynamic is not None else None)
        seen = tactics.get(tactic)
        candidate = PredictedTactic(row.get("op") or "?", tactic, row.get("tile"), row.get("fusion"),
                                    row.get("swap_ab"), verdict, dynamic, static)
        if seen is None or (candidate.total_bytes or 0) > (seen.total_bytes or 0):
            tactics[tactic] = candidate
    return Prediction(source, str(result.get("flashinfer")), str(result.get("arch")), str(result.get("dtype")),
                      result.get("capacity_bytes"), tactics)


def prediction_from_fit_cell(cell: dict[str, Any], source: str, entries: list[tuple[int, str, str, str, bool]]) -> Prediction:
    """A fit-table cell (its failing tactics with bytes, its rejected ones) over the release's tactic list
    ``entries`` (tactic, op, tile, fusion, swap_ab): a tactic neither failing nor rejected is predicted to fit,
    its bytes known only where the cell names them (the default tactics)."""
    failing = {row["tactic"]: row for row in cell.get("failing") or []}
    rejected = set(cell.get("dispatch_rejected_tactics") or [])
    known = {d["tactic"]: d.get("kernel_smem_bytes") for d in (cell.get("default_tactics") or {}).values()}
    tactics: dict[int, PredictedTactic] = {}
    for tactic, op, tile, fusion, swap_ab in entries:
        if tactic in failing:
            row = failing[tactic]
            tactics[tactic] = PredictedTactic(op, tactic, tile, fusion, swap_ab, Predicted.EXCEEDS, row.get("kernel_smem_bytes"),
                                              row.get("static_smem_bytes", 0))
        elif tactic in rejected:
            tactics[tactic] = PredictedTactic(op, tactic, tile, fusion, swap_ab, Predicted.REJECTED, None)
        else:
            tactics[tactic] = PredictedTactic(op, tactic, tile, fusion, swap_ab, Predicted.FITS, known.get(tactic),
                                              0 if known.get(tactic) is not None else None)
    return Prediction(source, str(cell.get("flashinfer")), str(cell.get("arch")), str(cell.get("dtype")),
                      cell.get("capacity_bytes"), tactics)


class Agreement(StrEnum):
    """Whether the triage and the prediction say the same of one tactic; written as its value (``"disagree"``)."""

    AGREE = "agree"
    DISAGREE = "disagree"
    UNKNOWN = "unknown"  # the log cannot say whether it was tried, or the prediction has no such tactic


class Comparison(StrEnum):
    """The reconciliation's ``status``: compared, or not (its ``reason`` says why)."""

    COMPARED = "compared"
    NOT_COMPARED = "not_compared"


@dataclass(frozen=True)
class TacticAgreement:
    """One tactic that failed at runtime or was predicted to overflow, and whether the two diagnoses agree."""

    op: str | None
    tactic: int
    tile: str | None
    fusion: str | None
    swap_ab: bool | None
    failed: bool
    tried: bool | None  # None: the log cannot say (per-tactic lines hidden by the log level)
    predicted: str | None  # fits, exceeds, rejected; None: the prediction has no such tactic
    dynamic_bytes: int | None
    static_bytes: int | None
    agreement: Agreement
    says: str

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "tactic": self.tactic, "tile": self.tile, "fusion": self.fusion, "swap_ab": self.swap_ab,
                "failed": self.failed, "tried": self.tried, "predicted": self.predicted,
                "dynamic_bytes": self.dynamic_bytes, "static_bytes": self.static_bytes,
                "agreement": self.agreement, "says": self.says}


def _who(op: str | None, tactic: int, tile: str | None, fusion: str | None, swap_ab: bool | None) -> str:
    gemm = (op or "?").rpartition("::")[2]
    shape = " ".join(x for x in (tile, fusion, "swap_ab" if swap_ab else None) if x)
    return f"{gemm} tactic {tactic}" + (f" ({shape})" if shape else "")


def _bytes_said(predicted: PredictedTactic, capacity: int | None) -> str:
    if predicted.total_bytes is None:
        return "bytes not in the prediction"
    static = f", {_bytes(predicted.static_bytes)} static" if predicted.static_bytes else ""
    against = f" vs {_bytes(capacity)}" if capacity else ""
    return f"{_bytes(predicted.total_bytes)}{static}{against}"


def _failed_row(row: FailureRow, predicted: PredictedTactic | None, capacity: int | None) -> TacticAgreement:
    tactic = int(row.tactic)
    if predicted is None:
        return TacticAgreement(row.op, tactic, row.tile, row.fusion, row.swap_ab, True, True, None, None, None,
                               Agreement.UNKNOWN, "failed; the prediction has no such tactic")
    facts = (predicted.dynamic_bytes, predicted.static_bytes)
    if predicted.verdict == Predicted.EXCEEDS:
        return TacticAgreement(row.op, tactic, row.tile, row.fusion, row.swap_ab, True, True, Predicted.EXCEEDS, *facts,
                               Agreement.AGREE, f"failed, predicted to overflow ({_bytes_said(predicted, capacity)})")
    if predicted.verdict == Predicted.REJECTED:
        return TacticAgreement(row.op, tactic, row.tile, row.fusion, row.swap_ab, True, True, Predicted.REJECTED, *facts,
                               Agreement.AGREE, "failed, predicted to be rejected by the dispatcher")
    said = f"({_bytes(predicted.total_bytes)})" if predicted.total_bytes is not None else "(bytes not in the prediction)"
    return TacticAgreement(row.op, tactic, row.tile, row.fusion, row.swap_ab, True, True, Predicted.FITS, *facts,
                           Agreement.DISAGREE, f"failed but predicted to fit {said}")


def _overflow_row(predicted: PredictedTactic, tried: bool | None, capacity: int | None) -> TacticAgreement:
    facts = (predicted.dynamic_bytes, predicted.static_bytes)
    who = (predicted.op, predicted.tactic, predicted.tile, predicted.fusion, predicted.swap_ab)
    bytes_said = _bytes_said(predicted, capacity)
    if tried is None:
        return TacticAgreement(*who, False, None, Predicted.EXCEEDS, *facts, Agreement.UNKNOWN,
                               f"predicted to overflow ({bytes_said}); the log level hides whether it was tried")
    if tried:
        return TacticAgreement(*who, False, True, Predicted.EXCEEDS, *facts, Agreement.DISAGREE,
                               f"predicted to overflow ({bytes_said}), profiled without a failure")
    return TacticAgreement(*who, False, False, Predicted.EXCEEDS, *facts, Agreement.DISAGREE,
                           f"predicted to overflow ({bytes_said}), never tried")


@dataclass(frozen=True)
class Reconciliation:
    """The per-tactic comparison, or why there is none."""

    prediction: Prediction | None
    reason: str | None  # why nothing was compared
    rows: tuple[TacticAgreement, ...] = ()

    @property
    def disagreements(self) -> list[str]:
        return [f"{_who(r.op, r.tactic, r.tile, r.fusion, r.swap_ab)}: {r.says}" for r in self.rows
                if r.agreement == Agreement.DISAGREE]

    @property
    def agree(self) -> bool | None:
        """True: every failed tactic was predicted to fail and every predicted overflow failed; None: not compared."""
        if self.prediction is None:
            return None
        if any(r.agreement == Agreement.DISAGREE for r in self.rows):
            return False
        return None if any(r.agreement == Agreement.UNKNOWN for r in self.rows) else True

    def to_json(self) -> dict[str, Any]:
        p = self.prediction
        return {
            "status": Comparison.COMPARED if p is not None else Comparison.NOT_COMPARED,
            "reason": self.reason,
            "agree": self.agree,
            "prediction": None if p is None else {"source": p.source, "flashinfer": p.flashinfer, "arch": p.arch,
                                                  "dtype": p.dtype, "capacity_bytes": p.capacity_bytes},
            "tactics": [r.to_json() for r in self.rows],
            # null when nothing was compared, so that an expectation of no disagreement cannot pass on no evidence
            "disagreements": self.disagreements if p is not None else None,
        }


def reconcile(failures: list[FailureRow], tried: frozenset[int], tactic_lines_visible: bool,
              prediction: Prediction | None, reason: str | None = None) -> Reconciliation:
    """Each failed tactic against its prediction, and each predicted overflow against the run.

    ``tried`` are the tactic numbers the log shows profiled or failed; ``tactic_lines_visible`` is False when the
    log level hid FlashInfer's per-tactic lines, so that a predicted overflow not seen failing cannot be told apart
    from one never tried."""
    if prediction is None:
        return Reconciliation(None, reason or "no static prediction for this release and arch")
    rows: list[TacticAgreement] = []
    failed: set[int] = set()
    for row in failures:
        if not isinstance(row.tactic, int) or row.tactic in failed:
            continue
        failed.add(row.tactic)
        rows.append(_failed_row(row, prediction.tactics.get(row.tactic), prediction.capacity_bytes))
    for number, predicted in sorted(prediction.tactics.items()):
        if predicted.verdict != Predicted.EXCEEDS or number in failed:
            continue
        seen = (number in tried) if tactic_lines_visible else None
        rows.append(_overflow_row(predicted, seen, prediction.capacity_bytes))
    rows.sort(key=lambda r: r.tactic)
    return Reconciliation(prediction, None, tuple(rows))
