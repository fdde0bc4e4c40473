"""Triage and the static analysis side by side, per tactic (reprokit/triage/reconcile.py)."""

import json
from pathlib import Path

import pytest

from reprokit.fix.fit_prediction import predict as fit_table_predict
from reprokit.plan.triage_step import _static_predictor
from reprokit.records.models import StepEntry, StepStatus
from reprokit.triage import triage_files
from reprokit.triage.reconcile import prediction_from_static_result
from tests.unit.triage.triage_logs import flashinfer, lines_bytes, sglang, skip_record

REPO = Path(__file__).resolve().parents[3]
EP8 = REPO / "tests/fixtures/logs/sglang-ep8-0.6.3-ready-autotune-failures.log.gz"
HIDDEN = REPO / "tests/fixtures/logs/sglang-0.6.8-info-level-hidden-tactics.log"
STATIC = json.loads((REPO / "tests/unit/report/fixtures/static-smem-0.6.3-sm120.result.json").read_text())
PREDICTION = prediction_from_static_result(STATIC, "steps/static-smem/result.json")
RUNNER = "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7f3a5c1e2d10>"


def _static(version, arch):
    return PREDICTION if (version, arch) == ("0.6.3", "sm120") else None


def _log(tmp_path, body):
    path = tmp_path / "server.log"
    lines = [sglang("Running FlashInfer autotune...", "TP0"),
             flashinfer("[Autotuner]: Autotuning process starts ...", "INFO"), *body,
             flashinfer("[Autotuner]: Autotuning process ends", "INFO"), sglang("The server is fired up and ready to roll!")]
    path.write_bytes(lines_bytes(lines))
    return path


def test_the_ep8_fixture_agrees_with_the_static_analysis_tactic_by_tactic():
    data = triage_files([EP8], flashinfer_version="0.6.3", predict=_static).to_json()
    found = data["reconciliation"]
    assert (found["status"], found["agree"], found["disagreements"]) == ("compared", True, [])
    assert data["autotune_failure_tactics"] == [14, 15]
    assert [(t["tactic"], t["tile"], t["fusion"], t["swap_ab"], t["predicted"], t["dynamic_bytes"], t["static_bytes"],
             t["agreement"]) for t in found["tactics"]] == [
        (14, "128x256x128", "FINALIZE", False, "exceeds", 102400, 0, "agree"),
        (15, "256x128x128", "FINALIZE", False, "exceeds", 102400, 0, "agree")]
    assert found["tactics"][0]["says"] == "failed, predicted to overflow (102 400 B vs 101 376 B)"


def test_a_failure_predicted_to_fit_and_an_overflow_never_tried_are_named(tmp_path):
    """The fixture's old numbering (gemm2 10 failing) against 0.6.3's analysis: 10 fits at 98 304 B."""
    log = _log(tmp_path, skip_record(10, tile=(128, 256, 128), stage=2))
    found = triage_files([log], flashinfer_version="0.6.3", predict=_static).to_json()["reconciliation"]
    assert found["agree"] is False
    assert found["disagreements"] == [
        "gemm2 tactic 10 (128x256x128 NONE): failed but predicted to fit (98 304 B)",
        "gemm2 tactic 14 (128x256x128 FINALIZE): predicted to overflow (102 400 B vs 101 376 B), never tried",
        "gemm2 tactic 15 (256x128x128 FINALIZE): predicted to overflow (102 400 B vs 101 376 B), never tried",
    ]
    assert [(t["tactic"], t["failed"], t["tried"]) for t in found["tactics"]] == [
        (10, True, True), (14, False, False), (15, False, False)]


def test_an_overflow_profiled_without_a_failure_is_a_disagreement(tmp_path):
    body = [*skip_record(14, fusion=3, stage=2),
            flashinfer(f"[Autotuner]: profiling {RUNNER} 15, shapes=[torch.Size([256, 3072])], avg_time 0.41", "DEBUG")]
    found = triage_files([_log(tmp_path, body)], flashinfer_version="0.6.3", predict=_static).to_json()["reconciliation"]
    assert found["disagreements"] == [
        "gemm2 tactic 15 (256x128x128 FINALIZE): predicted to overflow (102 400 B vs 101 376 B), "
        "profiled without a failure"]


def test_hidden_tactic_lines_leave_the_overflows_unknown_not_disagreeing():
    prediction = prediction_from_static_result({**STATIC, "flashinfer": "0.6.8"}, "static")
    found = triage_files([HIDDEN], flashinfer_version="0.6.8", predict=lambda v, a: prediction).to_json()["reconciliation"]
    assert (found["agree"], found["disagreements"]) == (None, [])
    assert {t["agreement"] for t in found["tactics"]} == {"unknown"}
    assert found["tactics"][0]["says"].endswith("the log level hides whether it was tried")


def test_without_a_release_or_a_prediction_nothing_is_compared_and_no_agreement_is_claimed(tmp_path):
    log = _log(tmp_path, skip_record(14, fusion=3, stage=2))
    unknown = triage_files([log], predict=_static).to_json()["reconciliation"]
    assert (unknown["status"], unknown["agree"], unknown["disagreements"]) == ("not_compared", None, None)
    assert unknown["reason"].startswith("the FlashInfer release is unknown")
    other = triage_files([log], flashinfer_version="0.6.4", predict=_static).to_json()["reconciliation"]
    assert other["reason"] == "no static prediction for FlashInfer 0.6.4 on sm120"


def test_the_fit_table_predicts_for_a_plain_log_with_the_bytes_it_holds():
    data = triage_files([EP8], flashinfer_version="0.6.3", predict=fit_table_predict).to_json()["reconciliation"]
    assert (data["agree"], data["prediction"]["source"]) == (True, "fit table 0.6.3/sm120/nvfp4 (fit-table.json)")
    prediction = fit_table_predict("0.6.3", "sm120")
    assert (prediction.tactics[14].verdict, prediction.tactics[14].dynamic_bytes) == ("exceeds", 102400)
    assert (prediction.tactics[10].verdict, prediction.tactics[10].dynamic_bytes) == ("fits", None)
    assert (prediction.tactics[8].verdict, prediction.tactics[8].dynamic_bytes) == ("fits", 89088)  # a default tactic
    assert fit_table_predict("0.0.1", "sm120") is None


@pytest.mark.parametrize("status, uses, expected", [
    (StepStatus.OK, "static-smem", "steps/static-smem/result.json"),
    (StepStatus.OK, "tile-sweep", None),
    (StepStatus.NOT_RUN, "static-smem", None),
])
def test_the_kit_step_predicts_from_its_own_static_smem_step(status, uses, expected):
    entry = StepEntry(name="static-smem", uses=uses, status=status, result_file="steps/static-smem/result.json",
                      result=STATIC)
    predict = _static_predictor({"static-smem": entry})
    found = predict("0.6.3", "sm120") if predict else None
    assert (found.source if found else None) == expected
    if predict:
        assert predict("0.6.3", "sm121") is None  # another arch's log is not this step's to predict


def test_invoke_triage_json_carries_the_reconciliation_from_the_fit_table():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "invoke", "triage", "--json", "--flashinfer", "0.6.3", str(EP8)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 10, done.stderr
    found = json.loads(done.stdout)["reconciliation"]
    assert (found["status"], found["agree"], found["prediction"]["source"]) == (
        "compared", True, "fit table 0.6.3/sm120/nvfp4 (fit-table.json)")
    assert [(t["tactic"], t["predicted"], t["dynamic_bytes"]) for t in found["tactics"]] == [
        (14, "exceeds", 102400), (15, "exceeds", 102400)]
