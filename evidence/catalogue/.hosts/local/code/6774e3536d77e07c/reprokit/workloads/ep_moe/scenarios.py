"""The EP MoE step's parameters, checked, and the scenarios it runs (standard library only).

A scenario is one launch of every rank: the autotuner as the release ships it (``plain``), with a tactics
blocklist (``FLASHINFER_TACTICS_BLOCKLIST``), with ``autotune(skip_ops=...)``, each with and without the
release's cross-rank tuning (``set_autotune_process_group``: every rank's per-tactic timings averaged, so that
all ranks choose the same tactic), and the blocklist with ``FLASHINFER_DIST_AWARE_AUTOTUNE=1`` (which 0.6.18
reads only in its TRT-LLM-gen MoE ops: the run shows whether the CUTLASS path changes).
"""

from __future__ import annotations

from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError

# GLM-5's MoE (UPSTREAM.md): hidden 6144, MoE intermediate 2048, 256 routed experts, top-8. The step keeps the
# expert count and top-k and divides hidden and intermediate by ``shape_divisor`` so that tuning fits the lease.
DEFAULTS: dict[str, Any] = {
    "hidden": 6144, "intermediate": 2048, "experts": 256, "top_k": 8, "shape_divisor": 4,
    "tokens_per_rank": [16, 64], "tuning_buckets": [16, 64, 256], "seed": 5, "weight_scale": 0.05,
    "scenario_timeout_s": 300, "build_timeout_s": 580, "nccl_debug": "INFO",
}
GEMM1_OP = "trtllm::fused_moe::gemm1"
DIST_AWARE_ENV = "FLASHINFER_DIST_AWARE_AUTOTUNE"


def default_scenarios(blocklist: dict[str, list[int]]) -> list[dict[str, Any]]:
    """Plain, blocklist, skip gemm1; each without and with the process group; the blocklist with the env switch."""
    base = [{"name": "plain"}, {"name": "blocklist", "blocklist": blocklist}, {"name": "skip-gemm1", "skip_ops": [GEMM1_OP]}]
    with_group = [{**s, "name": f"{s['name']}-group", "process_group": True} for s in base]
    env_switch = {"name": "blocklist-dist-aware-env", "blocklist": blocklist, "env": {DIST_AWARE_ENV: "1"}}
    return [*base, *with_group, env_switch]


def _positive_int(params: dict[str, Any], key: str) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorkloadError(Exit.BAD_PARAMS, f"params: {key}: expected a positive integer, got {value!r}")
    return value


def _int_list(params: dict[str, Any], key: str) -> list[int]:
    value = params[key]
    if not isinstance(value, list) or not value or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value):
        raise WorkloadError(Exit.BAD_PARAMS, f"params: {key}: expected a list of positive integers, got {value!r}")
    return value


def blocklist_of(params: dict[str, Any]) -> dict[str, list[int]]:
    """``{runner key: [tactic, ...]}`` as FlashInfer's blocklist file keys it (``trtllm::fused_moe::gemm1::MoERunner``)."""
    value = params.get("blocklist") or {}
    if not isinstance(value, dict) or any(not isinstance(k, str) or not isinstance(v, list)
                                          or any(isinstance(t, bool) or not isinstance(t, int) for t in v)
                                          for k, v in value.items()):
        raise WorkloadError(Exit.BAD_PARAMS, "params: blocklist: expected a mapping of runner key to a list of tactic"
                            " ids, e.g. {'trtllm::fused_moe::gemm1::MoERunner': [2, 5]}")
    return value


def checked(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters with defaults filled and every number checked; a wrong one is one line naming its key."""
    merged = {**DEFAULTS, **{k: v for k, v in params.items() if v is not None}}
    if "world_size" not in params:
        raise WorkloadError(Exit.BAD_PARAMS, "params: world_size: missing (the planner fills it from the host's GPU count)")
    for key in ("world_size", "hidden", "intermediate", "experts", "top_k", "shape_divisor", "scenario_timeout_s",
                "build_timeout_s"):
        _positive_int(merged, key)
    for key in ("tokens_per_rank", "tuning_buckets"):
        _int_list(merged, key)
    if merged["experts"] % merged["world_size"]:
        raise WorkloadError(Exit.BAD_PARAMS, f"params: experts: {merged['experts']} experts do not shard evenly over"
                            f" world_size {merged['world_size']} ranks")
    if merged["hidden"] % merged["shape_divisor"] or merged["intermediate"] % merged["shape_divisor"]:
        raise WorkloadError(Exit.BAD_PARAMS, f"params: shape_divisor: {merged['shape_divisor']} must divide hidden"
                            f" {merged['hidden']} and intermediate {merged['intermediate']}")
    if merged["top_k"] > merged["experts"]:
        raise WorkloadError(Exit.BAD_PARAMS, f"params: top_k: {merged['top_k']} is more than the {merged['experts']} experts")
    merged["blocklist"] = blocklist_of(merged)
    prebuilt = merged.get("prebuilt_module")
    if prebuilt is not None and (not isinstance(prebuilt, dict) or not isinstance(prebuilt.get("library"), str)):
        raise WorkloadError(Exit.BAD_PARAMS, "params: prebuilt_module: expected {'library': PATH, 'flashinfer': VERSION,"
                            " 'arch': 'sm90'} (a module built by an earlier run of the same release and arch)")
    scenarios = merged.get("scenarios") or default_scenarios(merged["blocklist"])
    names = [s.get("name") for s in scenarios if isinstance(s, dict)]
    if len(names) != len(scenarios) or len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise WorkloadError(Exit.BAD_PARAMS, "params: scenarios: each needs a distinct non-empty 'name'")
    merged["scenarios"] = scenarios
    return merged


def rank_config(params: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    """What every rank of one scenario reads (``config.json``): the scaled shapes and the tuner's settings."""
    divisor = params["shape_divisor"]
    return {"hidden": params["hidden"] // divisor, "intermediate": params["intermediate"] // divisor,
            "experts": params["experts"], "top_k": params["top_k"], "seed": params["seed"],
            "weight_scale": params["weight_scale"], "tokens_per_rank": params["tokens_per_rank"],
            "tuning_buckets": params["tuning_buckets"], "skip_ops": list(scenario.get("skip_ops") or []),
            "process_group": bool(scenario.get("process_group")), "scenario": scenario["name"]}
