"""Cross-check rules: agreement, every kind of disagreement, and what stays unverified."""

from __future__ import annotations

import json

from reprokit.workloads.tile_sweep import crosscheck
from reprokit.workloads.tile_sweep.classify import classify

SM90_OPTIN = 232448


def config(config_id, sm90_bytes, sm120_bytes, launch, driver_ok):
    return {
        "id": config_id,
        "compiled": {"sm90": {"ok": True, "shared_bytes": sm90_bytes}, "sm120": {"ok": True, "shared_bytes": sm120_bytes}},
        "predicted_fits": {"sm90": sm90_bytes <= SM90_OPTIN, "sm120": sm120_bytes <= 101376},
        "launch": launch,
        "driver_optin": {"ok": driver_ok, "requested_bytes": sm90_bytes,
                         "error_name": None if driver_ok else "CUDA_ERROR_INVALID_VALUE"},
    }


LOADED = {"outcome": "loaded", "shared_bytes": 61440}
# the error as the sweep records it: Triton's own message through the sweep's classifier (on the H200 the
# fields are named by the shared facts; a hand-written {"required": ...} here once hid a renamed field)
OOR = {"outcome": "out_of_resources", "error": classify(
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448."
    " Reducing block sizes or `num_stages` may help.")}


def agreeing_configs():
    return [
        config("m16n64k128s4w4", 61440, 61440, dict(LOADED), True),
        config("m16n128k128s4w4", 110592, 110592, {**LOADED, "shared_bytes": 110592}, True),
        config("m128n128k128s4w8", 262144, 196608, dict(OOR), False),
    ]


def test_all_agree():
    items, unverified = crosscheck.check_triton(agreeing_configs(), "sm90", SM90_OPTIN)
    assert [i for i in items if not i["agree"]] == []
    assert len(items) == 3 * 3  # fits, shared_bytes, driver_grants per config
    assert unverified == []


def test_predicted_fit_but_out_of_resources_is_a_disagreement():
    configs = agreeing_configs()
    configs[0]["launch"] = {"outcome": "out_of_resources", "error": classify(
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 61440, Hardware limit: 232448.")}
    items, _ = crosscheck.check_triton(configs, "sm90", SM90_OPTIN)
    bad = [i for i in items if not i["agree"]]
    assert [(i["subject"], i["check"], i["predicted"], i["observed"]) for i in bad] == [
        ("triton:m16n64k128s4w4", "fits", True, False)]


def test_predicted_not_to_fit_but_loaded_is_a_disagreement():
    configs = agreeing_configs()
    configs[2]["launch"] = {"outcome": "loaded", "shared_bytes": 262144}
    items, _ = crosscheck.check_triton(configs, "sm90", SM90_OPTIN)
    assert [(i["subject"], i["check"]) for i in items if not i["agree"]] == [("triton:m128n128k128s4w8", "fits")]


def test_another_failure_class_disagrees_with_a_fit_prediction():
    configs = agreeing_configs()
    configs[1]["launch"] = {"outcome": "cuda_error"}
    items, _ = crosscheck.check_triton(configs, "sm90", SM90_OPTIN)
    bad = [i for i in items if not i["agree"]]
    assert len(bad) == 1 and bad[0]["observed"] == "failed: cuda_error"


def test_driver_and_bytes_disagreements():
    configs = agreeing_configs()
    configs[0]["driver_optin"]["ok"] = False  # the driver refused what should fit
    configs[1]["launch"]["shared_bytes"] = 110600  # the JIT's kernel is not the one predicted
    items, _ = crosscheck.check_triton(configs, "sm90", SM90_OPTIN)
    assert sorted((i["subject"], i["check"]) for i in items if not i["agree"]) == [
        ("triton:m16n128k128s4w4", "shared_bytes"), ("triton:m16n64k128s4w4", "driver_grants")]


def test_not_launched_is_unverified_not_dropped():
    configs = agreeing_configs()
    configs[0]["launch"] = {"outcome": "not_attempted"}
    items, unverified = crosscheck.check_triton(configs, "sm90", SM90_OPTIN)
    assert [(u["subject"], u["check"]) for u in unverified] == [("triton:m16n64k128s4w4", "fits")]


def test_cross_arch_lists_configs_that_run_here_but_not_on_sm120():
    section = crosscheck.cross_arch(agreeing_configs(), "sm120")
    assert section["fits_there"] == ["m16n64k128s4w4"]
    assert section["does_not_fit_there"] == ["m16n128k128s4w4", "m128n128k128s4w8"]
    assert section["runs_here_but_not_there"] == ["m16n128k128s4w4"]
    assert section["shared_bytes"]["m16n128k128s4w4"] == 110592


BOUNDARY = {
    "status": "ran", "optin_bytes": SM90_OPTIN,
    "launch_at_optin_limit": {"ok": True, "dynamic_shared_bytes": SM90_OPTIN},
    "launch_past_optin_limit": {"ok": False, "dynamic_shared_bytes": SM90_OPTIN + 1, "error_name": "CUDA_ERROR_INVALID_VALUE"},
}


def test_boundary_agrees_and_disagrees():
    assert all(i["agree"] for i in crosscheck.check_boundary(BOUNDARY, SM90_OPTIN))
    grants_too_much = {**BOUNDARY, "launch_past_optin_limit": {"ok": True, "dynamic_shared_bytes": SM90_OPTIN + 1}}
    bad = [i["subject"] for i in crosscheck.check_boundary(grants_too_much, SM90_OPTIN) if not i["agree"]]
    assert bad == ["boundary:one-byte-past"]
    bad = [i["subject"] for i in crosscheck.check_boundary(BOUNDARY, 101376) if not i["agree"]]
    assert bad == ["boundary:optin-limit"]


def write_prediction(tmp_path, data):
    path = tmp_path / "static.json"
    path.write_text(json.dumps(data))
    return crosscheck.load_predicted(path)


def test_load_predicted_accepts_the_spellings(tmp_path):
    predicted = write_prediction(tmp_path, {
        "arch": "sm120",
        "failing_tiles": ["CtaShape128x128x128B", {"tile": [256, 128, 128]}],
        "rows": [{"tile": "128x128x128", "fits": True}, {"tile": "128x256x128", "fits": False}],
    })
    assert predicted["arch"] == "sm120"
    assert predicted["failing_tiles"] == ["128x128x256", "128x256x128", "256x128x128"]
    assert predicted["fitting_tiles"] == ["128x128x128"]


def flashinfer_ran(*failed_tiles):
    rows = [{"backend": "flashinfer", "outcome": "failed", "tile": tile, "error": {"class": "error_internal_init"}}
            for tile in failed_tiles]
    rows.append({"backend": "flashinfer", "outcome": "ok", "tile": None, "error": None})
    return {"status": "ran", "rows": rows}


def test_flashinfer_prediction_matches(tmp_path):
    predicted = write_prediction(tmp_path, {"arch": "sm120", "failing_tiles": ["128x128x256"],
                                            "rows": [{"tile": "128x128x128", "fits": True}]})
    items, unverified = crosscheck.check_flashinfer(flashinfer_ran("128x128x256", "128x128x256"), predicted, "sm120")
    assert [(i["subject"], i["agree"]) for i in items] == [("flashinfer:128x128x256", True), ("flashinfer:128x128x128", True)]
    assert unverified == []


def test_flashinfer_failure_the_prediction_missed_is_a_disagreement(tmp_path):
    predicted = write_prediction(tmp_path, {"arch": "sm120", "failing_tiles": ["128x128x256"]})
    items, _ = crosscheck.check_flashinfer(flashinfer_ran("128x128x256", "256x128x128"), predicted, "sm120")
    bad = [(i["subject"], i["predicted"], i["observed"]) for i in items if not i["agree"]]
    assert bad == [("flashinfer:256x128x128", None, False)]


def test_flashinfer_predicted_failure_that_ran_is_a_disagreement(tmp_path):
    predicted = write_prediction(tmp_path, {"arch": "sm120", "failing_tiles": ["128x256x128"]})
    items, _ = crosscheck.check_flashinfer(flashinfer_ran(), predicted, "sm120")
    assert [(i["subject"], i["predicted"], i["observed"], i["agree"]) for i in items] == [
        ("flashinfer:128x256x128", False, True, False)]


def test_flashinfer_skipped_leaves_predictions_unverified(tmp_path):
    predicted = write_prediction(tmp_path, {"arch": "sm120", "failing_tiles": ["128x128x256", "128x256x128"]})
    skipped = {"status": "skipped", "reason": "the device is sm90"}
    items, unverified = crosscheck.check_flashinfer(skipped, predicted, "sm90")
    assert items == []
    assert [u["subject"] for u in unverified] == ["flashinfer:128x128x256", "flashinfer:128x256x128"]
    assert "the device is sm90" in unverified[0]["reason"]


def test_cross_check_collects_disagreements_into_a_real_list():
    configs = agreeing_configs()
    configs[0]["launch"] = {"outcome": "out_of_resources", "error": {"fields": {}}}
    result = crosscheck.cross_check(
        native_arch="sm90", optin_bytes=SM90_OPTIN, triton={"status": "ran", "configs": configs},
        boundary=BOUNDARY, flashinfer={"status": "skipped", "reason": "sm90"}, predicted=None,
        cross_arches=("sm120",))
    assert isinstance(result["disagreements"], list)
    assert [(d["subject"], d["check"]) for d in result["disagreements"]] == [("triton:m16n64k128s4w4", "fits")]
    assert result["checked"] == 3 + 3 + 3 + 3 - 1  # no shared_bytes item for the OOR without a Required field
    assert result["agreements"] == result["checked"] - 1
    assert [u["check"] for u in result["unverified"]] == ["fits_sm120"] * 3
    assert result["cross_arch"]["sm120"]["runs_here_but_not_there"] == ["m16n128k128s4w4"]


def test_cross_check_all_agree_gives_an_empty_list():
    result = crosscheck.cross_check(
        native_arch="sm90", optin_bytes=SM90_OPTIN, triton={"status": "ran", "configs": agreeing_configs()},
        boundary=BOUNDARY, flashinfer={}, predicted=None, cross_arches=("sm120",))
    assert result["disagreements"] == []
    assert result["checked"] == result["agreements"] == 12
