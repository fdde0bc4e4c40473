"""``tile-sweep``: the MoE GEMM shapes timed on the GPU for each tile, against the roofline and the prediction."""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.step_kinds.base import Part, Result, StepInput, StepKind


class Problem(Part):
    """One MoE GEMM shape of the sweep, with the least work and traffic it needs."""

    id: str | None = None
    phase: str | None = None
    flops: int | None = None
    min_bytes: int | None = None


class BestTile(Part):
    """The fastest tile of one problem (or, with ``reason``, why none ran), against the roofline."""

    problem: str | None = None
    phase: str | None = None
    config: str | None = None
    reason: str | None = None
    bound: str | None = None
    time_median_s: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    fraction_of_roofline: float | None = None


class Roofline(Part):
    """The ceilings measured in the run."""

    copy_gbps: float | None = None
    read_gbps: float | None = None
    dense_gemm_tflops: float | None = None


class SweepDevice(Part):
    name: str | None = None
    gpu_arch: str | None = None


class SweepHeadline(Part):
    decode_target_fraction_of_copy: float | None = None


class CrossCheck(Part):
    """Each tile's run on this GPU against the static prediction (the judge reads it by path too)."""

    checked: int | None = None
    agreements: int | None = None
    disagreements: list[dict[str, Any]] | None = None
    unverified: list[Any] | None = None


class SweepResult(Result):
    model: str | None = None
    model_config_: dict[str, Any] | None = pydantic.Field(None, alias="model_config")  # pydantic owns the name
    params: dict[str, Any] | None = None
    device: SweepDevice | None = None
    versions: dict[str, Any] | None = None
    problems: list[Problem] | None = None
    roofline: Roofline | None = None
    backends: dict[str, Any] | None = None
    configs: list[dict[str, Any]] | None = None
    rows: list[dict[str, Any]] | None = None
    cross_check: CrossCheck | None = None
    best: list[BestTile] | None = None
    headline: SweepHeadline | None = None
    notes: list[str] | None = None
    timing: dict[str, Any] | None = None


KIND = StepKind(
    name="tile-sweep",
    where="host",
    order=30,
    module="reprokit.workloads.tile_sweep",
    summary="runtime tile sweep of the MoE GEMM shapes on the GPU, cross-checked against the prediction",
    needs_gpu=True,
    needs_pins=("torch",),
    implemented=True,
    default_timeout_s=900,
    param_keys=("model", "parallelism", "tokens_per_expert", "backends", "time_budget_s", "tile_configs"),
    inputs=(StepInput("predicted", "the static prediction (static-smem's result.json)", from_step="static-smem",
                      optional=True),),
    model_config_param="model",
    result=SweepResult,
)
