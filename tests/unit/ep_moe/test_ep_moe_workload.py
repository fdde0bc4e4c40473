"""The ep-moe workload's CPU-side parts: its parameters, FlashInfer's blocklist file, and the per-rank summary read
from the real records of the H200 run (evidence/h200-ep-moe-n1/run1)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.ep_moe import scenarios
from reprokit.workloads.ep_moe.summary import summarise
from reprokit.workloads.ep_moe.workload import blocklist_document, read_ranks
from tests.conftest import REPO

RUN = REPO / "evidence" / "h200-ep-moe-n1" / "run1"
BLOCKLIST = {"trtllm::fused_moe::gemm1::MoERunner": [2, 5], "trtllm::fused_moe::gemm2::MoERunner": [47]}


def test_defaults_scale_glm5s_moe_and_name_seven_scenarios() -> None:
    params = scenarios.checked({"world_size": 8, "blocklist": BLOCKLIST})
    assert [s["name"] for s in params["scenarios"]] == [
        "plain", "blocklist", "skip-gemm1", "plain-group", "blocklist-group", "skip-gemm1-group", "blocklist-dist-aware-env"]
    config = scenarios.rank_config(params, params["scenarios"][4])
    assert (config["hidden"], config["intermediate"], config["experts"], config["top_k"]) == (1536, 512, 256, 8)
    assert config["process_group"] is True and config["skip_ops"] == []
    assert params["scenarios"][6]["env"] == {"FLASHINFER_DIST_AWARE_AUTOTUNE": "1"}


@pytest.mark.parametrize(("params", "message"), [
    ({}, "params: world_size: missing (the planner fills it from the host's GPU count)"),
    ({"world_size": 3}, "params: experts: 256 experts do not shard evenly over world_size 3 ranks"),
    ({"world_size": 8, "tuning_buckets": []}, "params: tuning_buckets: expected a list of positive integers, got []"),
    ({"world_size": 8, "shape_divisor": 5}, "params: shape_divisor: 5 must divide hidden 6144 and intermediate 2048"),
    ({"world_size": 8, "blocklist": {"x": "2"}}, "params: blocklist: expected a mapping of runner key to a list of"
     " tactic ids, e.g. {'trtllm::fused_moe::gemm1::MoERunner': [2, 5]}"),
])
def test_bad_parameters_are_one_line_naming_the_key(params: dict, message: str) -> None:
    with pytest.raises(WorkloadError) as caught:
        scenarios.checked(params)
    assert caught.value.code is Exit.BAD_PARAMS and str(caught.value) == message


def test_blocklist_file_is_flashinfers_format_pinned_to_the_release() -> None:
    doc = blocklist_document(BLOCKLIST, "0.6.18")
    assert doc["invalid_tactics"] == BLOCKLIST and doc["_metadata"]["flashinfer_version"] == "0.6.18"
    assert json.loads((RUN / "blocklist" / "tactics-blocklist.json").read_text())["invalid_tactics"] == BLOCKLIST


def test_without_torch_the_workload_says_what_is_missing(tmp_path: Path) -> None:
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"world_size": 1}))
    done = subprocess.run([sys.executable, "-m", "reprokit.workloads.ep_moe", "--params", str(params), "--out-dir",
                           str(tmp_path / "out")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == Exit.MISSING_DEPENDENCY
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["status"] == "missing_dependency" and result["error"].startswith("ep-moe needs torch and flashinfer-python")


def _real_scenarios(tmp_path: Path) -> list[dict]:
    """The H200 run's scenarios, each rank re-read from its real rank0.json and rank0.log as the workload reads them."""
    ran = []
    for scenario in json.loads((RUN / "result.json").read_text())["scenarios"]:
        where = tmp_path / scenario["name"]
        where.mkdir()
        shutil.copy(RUN / scenario["name"] / "rank0.json", where / "rank0.json")
        (where / "rank0.log").write_bytes(gzip.decompress((RUN / scenario["name"] / "rank0.log.gz").read_bytes()))
        ran.append({**scenario, "ranks": read_ranks(where, 1)})
    return ran


def test_summary_of_the_real_n1_run(tmp_path: Path) -> None:
    summary = summarise(_real_scenarios(tmp_path), 1, BLOCKLIST)
    assert summary["every_rank_reported"] is True
    assert summary["tactics_profiled_plain"] == list(range(126))
    assert summary["blocked_tactics_profiled_plain"] == [2, 5, 47]
    assert summary["blocklist_honoured_on_every_rank"] is True
    assert summary["skip_ops_honoured_on_every_rank"] is True
    assert summary["chosen_agree_with_process_group"] is True
    assert summary["dist_aware_env_changed_profiling"] is False
    assert summary["failed_while_profiling"] == []
    assert 1e-3 < summary["max_rel_err"] < 1e-2  # BF16 against float32
    by_name = {f["name"]: f for f in summary["figures"]}
    assert by_name["plain"]["profiled_per_rank"] == {"0": {"gemm1": 45, "gemm2": 81}}
    assert by_name["blocklist-group"]["profiled_per_rank"] == {"0": {"gemm1": 43, "gemm2": 80}}
    assert by_name["skip-gemm1"]["profiled_per_rank"] == {"0": {"gemm1": 0, "gemm2": 81}}
    recorded = json.loads((RUN / "figures-from-logs.json").read_text())
    recorded.pop("recomputed_from")
    assert json.loads(json.dumps(summary)) == recorded  # the evidence's figures are this summary's, unedited


def test_a_rank_without_a_log_makes_every_claim_false(tmp_path: Path) -> None:
    ran = _real_scenarios(tmp_path)
    for scenario in ran:
        scenario["ranks"] = [{**scenario["ranks"][0], "log_read": None}]
    summary = summarise(ran, 1, BLOCKLIST)
    assert summary["every_rank_reported"] is False
    assert summary["blocklist_honoured_on_every_rank"] is False
    assert summary["skip_ops_honoured_on_every_rank"] is False
    assert summary["chosen_agree_with_process_group"] is False


def test_a_rank_that_profiled_nothing_does_not_honour_the_blocklist(tmp_path: Path) -> None:
    ran = _real_scenarios(tmp_path)
    for scenario in ran:
        scenario["ranks"][0]["log_read"] = {**scenario["ranks"][0]["log_read"], "profiled": []}
    summary = summarise(ran, 1, BLOCKLIST)
    assert summary["every_rank_reported"] is True
    assert summary["blocklist_honoured_on_every_rank"] is False and summary["skip_ops_honoured_on_every_rank"] is False
