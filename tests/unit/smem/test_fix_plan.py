"""invoke fix: the knobs for a release, the blocklist loaded by that release's own loader, flags checked.

The failing tactics come from the committed fit table (reprokit/data/fit-table.json); the wheels (flashinfer,
sglang) from the reprokit cache or the package index, once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from reprokit.errors import HostError
from reprokit.fix import blocklist
from reprokit.fix.bisect import bisect, table_verdict
from reprokit.fix.knobs import fix_plan
from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem import wheel as wheels

REPO = Path(__file__).resolve().parents[3]
GEMM1, GEMM2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"


def plan_for(version: str, sglang: str, out: Path | None = None) -> dict:
    try:
        return fix_plan(version, "sm120", "nvfp4", sglang, out_dir=out)
    except (HostError, WorkloadError) as exc:
        pytest.skip(f"wheels of flashinfer {version} / sglang {sglang}: {exc}")


def knob(plan: dict, name: str) -> dict:
    return next(k for k in plan["knobs"] if k["name"] == name)


def test_pinned_stack_has_only_the_fallback_and_the_fixed_kit_uses_it(tmp_path: Path) -> None:
    plan = plan_for("0.6.3", "0.5.9", tmp_path)
    assert plan["blocked"]["over_capacity"] == {GEMM1: [], GEMM2: [14, 15]}
    assert plan["recommended"] == "sglang-disable-autotune"
    assert knob(plan, "tactics-blocklist")["why_not"] == "flashinfer 0.6.3 does not read FLASHINFER_TACTICS_BLOCKLIST (added in 0.6.15)"
    assert knob(plan, "sglang-skip-ops")["why_not"] == (
        "flashinfer 0.6.3: flashinfer/autotuner.py: autotune() takes no skip_ops (skip_ops came in 0.6.13); "
        "--flashinfer-autotune-skip-ops is not an option of sglang 0.5.9 sglang/srt/server_args.py")
    fallback = knob(plan, "sglang-disable-autotune")
    assert fallback["checked_against"] == "sglang 0.5.9 sglang/srt/server_args.py"
    assert fallback["cost"] == (
        "nothing is autotuned: all 24 MoE tactics (and every other FlashInfer op's tuning) are lost; the MoE runs its "
        "default tactics (gemm1 tactic 0 (128x128x256 NONE, 89088 B, fits); gemm2 tactic 8 (128x128x256 NONE, 89088 B, fits))")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fix.json"]  # no blocklist for a release that cannot read one
    kit = yaml.safe_load((REPO / "kits" / "ep8-crash-fixed.yml").read_text())
    serve = next(s for s in kit["steps"] if s["uses"] == "serve")
    assert serve["with"]["extra_args"] == fallback["flags"]


def test_fixed_kit_is_the_failing_kit_plus_the_fix() -> None:
    base = yaml.safe_load((REPO / "kits" / "ep8-crash.yml").read_text())
    fixed = yaml.safe_load((REPO / "kits" / "ep8-crash-fixed.yml").read_text())
    assert fixed["pins"] == base["pins"] and fixed["images"] == base["images"]
    for a, b in zip(base["steps"], fixed["steps"], strict=True):
        if a["uses"] == "serve":
            b = {**b, "with": {k: v for k, v in b["with"].items() if k != "extra_args"}}
        assert a == b


@pytest.mark.parametrize("version, sglang, blocked", [
    ("0.6.18", "0.5.23", {GEMM1: [4, 5, 14, 15], GEMM2: [24, 25, 32, 33, 34, 35, 44, 45, 54, 55]}),
    ("0.7.4", "0.5.23", {GEMM2: [26, 27]}),
])
def test_blocklist_loads_in_the_releases_own_loader(tmp_path: Path, version: str, sglang: str, blocked: dict) -> None:
    plan = plan_for(version, sglang, tmp_path)
    assert plan["recommended"] == "tactics-blocklist"
    document = json.loads((tmp_path / "tactics-blocklist.json").read_text())
    assert document["invalid_tactics"] == {f"{op}::MoERunner": t for op, t in blocked.items()}
    assert document["_metadata"]["flashinfer_version"] == version
    # loaded again here, independently of fix_plan, by the wheel's own TacticsBlocklist
    wheel = wheels.fetch(version, wheels.default_cache_dir()).path
    fmt = blocklist.blocklist_format(wheel)
    counts = {op: n for op, n in json.loads((tmp_path / "fix.json").read_text())["diagnosis"]["tactic_counts"].items()}
    offered = {GEMM1: list(range(counts[GEMM1])), GEMM2: list(range(counts[GEMM1], counts[GEMM1] + counts[GEMM2]))}
    environment = {key: "any" for key in fmt.metadata_keys} | {"flashinfer_version": version,
                                                               "gpu": "NVIDIA GeForce RTX 5090"}
    checked = blocklist.verify(wheel, tmp_path / "tactics-blocklist.json", environment,
                               {f"{op}::MoERunner": t for op, t in offered.items()})
    assert checked["loaded"] is True
    total = sum(len(t) for t in blocked.values())
    assert checked["log"][0] == (f"INFO [TacticsBlocklist]: Loaded {total} invalid tactic(s) across {len(blocked)} "
                                 f"operation(s) from {tmp_path / 'tactics-blocklist.json'}")
    for op, tactics in offered.items():
        assert checked["kept"][f"{op}::MoERunner"] == [t for t in tactics if t not in blocked.get(op, [])]
    assert knob(plan, "sglang-skip-ops")["applies"] is True  # also possible there, at a higher cost


def test_the_loader_skips_a_blocklist_of_another_release(tmp_path: Path) -> None:
    plan = plan_for("0.6.18", "0.5.23", tmp_path)
    assert plan["recommended"] == "tactics-blocklist"
    wheel = wheels.fetch("0.6.18", wheels.default_cache_dir()).path
    environment = {key: "any" for key in blocklist.blocklist_format(wheel).metadata_keys} | {"flashinfer_version": "0.6.17"}
    checked = blocklist.verify(wheel, tmp_path / "tactics-blocklist.json", environment, {f"{GEMM2}::MoERunner": [32, 33]})
    assert (checked["loaded"], checked["kept"]) == (False, {f"{GEMM2}::MoERunner": [32, 33]})
    assert checked["log"] == [f"WARNING [TacticsBlocklist]: File {tmp_path / 'tactics-blocklist.json'} was generated in a "
                              "different environment (flashinfer_version: saved=0.6.18 vs current=0.6.17). Skipping."]


def test_bisect_reads_the_fit_table() -> None:
    assert table_verdict("0.6.3", "sm120", "128x256x128") == "fails"
    assert table_verdict("0.6.3", "sm120", "128x128x512") == "absent"
    assert table_verdict("0.6.8", "sm120", "128x128x512") == "unsupported"
    assert table_verdict("0.5.0", "sm120", "128x256x128") is None  # unreadable: the analysis would run
    releases = ["0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7", "0.6.8", "0.6.9", "0.6.10", "0.6.11"]
    found = bisect(releases, lambda v: table_verdict(v, "sm120", "128x128x512"))
    assert (found["last_unchanged"], found["first_changed"], found["to"]) == ("0.6.7", "0.6.8", "unsupported")


@pytest.mark.network
def test_vllm_skip_ops_env_is_checked_in_its_own_envs_py() -> None:
    try:
        newest = fix_plan("0.7.2", "sm120", "nvfp4", "0.5.23", vllm="0.33.0")
        pinned = fix_plan("0.6.3", "sm120", "nvfp4", "0.5.9", vllm="0.33.0")
    except (HostError, WorkloadError) as exc:
        pytest.skip(f"the vLLM 0.33.0 wheel: {exc}")
    vllm = knob(newest, "vllm-skip-ops")
    assert (vllm["applies"], vllm["env"], vllm["checked_against"], vllm["vllm_pins_flashinfer"]) == (
        True, {"VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS": GEMM2}, "vllm 0.33.0 vllm/envs.py", "0.7.2.post1")
    assert vllm["cost"] == ("32 tactics of trtllm::fused_moe::gemm2 lose tuning: each skipped op runs the binding's "
                            "default, its first tactic (gemm2 tactic 16 (128x128x256 NONE, 89088 B, fits))")
    assert knob(pinned, "vllm-skip-ops")["why_not"] == (
        "flashinfer 0.6.3: flashinfer/autotuner.py: autotune() takes no skip_ops (skip_ops came in 0.6.13)")
