"""``ep-moe``: FlashInfer's CUTLASS fused MoE with expert parallelism over NCCL on the host's N GPUs, every rank's
autotuner recorded (profiled, skipped, chosen tactics; tuning time) with and without a blocklist, ``skip_ops`` and
cross-rank tuning. N is the host's GPU count (``world_size: host``, the default), so one kit runs EP8 on an
8-GPU host and EP1 on a one-GPU host."""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Number, Output, Part, PinParam, Result, StepKind


class ScenarioFigures(Part):
    """One launch of every rank, as the kit's expectations read it."""

    name: str
    complete: bool
    ranks_reported: int
    profiled_per_rank: dict[str, dict[str, int]]
    same_profiled_on_every_rank: bool
    same_chosen_on_every_rank: bool
    blocked_tactics_profiled: list[list[int]]
    gemm1_profiled_while_skipped: int | None = None
    tuning_s: list[Number]
    max_rel_err: Number | None = None


class EpMoeResult(Result):
    flashinfer: str | None = None
    torch: str | None = None
    devices: list[str] | None = None
    arch: str | None = None
    world_size: int | None = None
    problem: dict[str, Any] | None = None
    build: dict[str, Any] | None = None
    every_rank_reported: bool | None = None
    ranks_per_scenario: dict[str, int] | None = None
    tactics_profiled_plain: list[int] | None = None
    blocked_tactics_profiled_plain: list[int] | None = None
    blocklist_honoured_on_every_rank: bool | None = None
    skip_ops_honoured_on_every_rank: bool | None = None
    chosen_agree_with_process_group: bool | None = None
    dist_aware_env_changed_profiling: bool | None = None
    failed_while_profiling: list[int] | None = None
    max_rel_err: Number | None = None
    all_finite: bool | None = None
    figures: list[ScenarioFigures] | None = None
    scenarios: list[dict[str, Any]] | None = None


KIND = StepKind(
    name="ep-moe",
    where="host",
    order=45,
    module="reprokit.workloads.ep_moe",
    summary="FlashInfer's fused MoE with expert parallelism over NCCL on the host's GPUs; every rank's autotuner recorded",
    needs_gpu=True,
    needs_pins=("torch", "flashinfer-python"),
    implemented=True,
    default_timeout_s=1800,
    param_keys=("world_size", "flashinfer", "hidden", "intermediate", "experts", "top_k", "shape_divisor",
                "tokens_per_rank", "tuning_buckets", "blocklist", "scenarios", "prebuilt_module", "scenario_timeout_s",
                "build_timeout_s", "nccl_debug", "seed"),
    pin_params=(PinParam("flashinfer", pin="flashinfer-python"),),
    gpu_count_param="world_size",
    outputs=(Output("result.json", "per scenario and rank: tactics profiled, skipped and chosen, tuning time, the"
                    " kernel's error against a float32 reference"),
             Output("*/server.log", "every rank's lines interleaved, as torch.distributed.run --tee prints them"),
             Output("*/rank*.log", "one rank's log"), Output("*/rank*.json", "one rank's result")),
    result=EpMoeResult,
)
