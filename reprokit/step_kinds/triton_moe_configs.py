"""``triton-moe-configs``: sglang's default and tuned Triton fused-MoE configurations sized per arch, by the
pipeliner's formula and by a Triton compile; the tuned files refit to SM120.

Its section: the defaults per arch next to each arch's limit, the tuned files that overflow, where the formula
matches the compile, and the files rewritten for SM120; one section per step.
"""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.step_kinds.base import Part, PinParam, Result, StepInput, StepKind


class Config(Part):
    """A Triton fused-MoE configuration (the names are Triton's)."""

    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    num_warps: int | None = None
    num_stages: int | None = None


class ArchBytes(Part):
    """A configuration's shared memory on one arch: compiled, by the formula, and whether it fits."""

    compiled_bytes: int | None = None
    predicted_bytes: int | None = None
    fits: bool | None = None


class Default(Part):
    """One branch of ``get_default_config``: when it applies, the configuration, its size per arch."""

    when: str
    config: Config
    by_arch: dict[str, ArchBytes]


class Tuned(Part):
    files: int
    config_dirs: list[str]
    configs: int
    configs_overflowing: dict[str, int]
    files_overflowing: dict[str, int]


class FormulaCheck(Part):
    """The pipeliner's formula against the compile, on one arch (distinct configurations)."""

    compared: int
    exact: int
    fit_verdict_differs: int


class ChangedConfig(Part):
    file: str
    batch: str
    from_: Config = pydantic.Field(alias="from")
    to: Config
    from_bytes: int
    to_bytes: int


class Emitted(Part):
    """The tuned files rewritten for one arch."""

    arch: str | None = None
    device_name: str | None = None
    from_device: str | None = None
    files: list[Any] | None = None
    changed_count: int = 0
    changed_configs: list[ChangedConfig] = []


class MoeConfigsResult(Result):
    sglang: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    triton: str | None = None
    compiled: bool | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    defaults: list[Default] | None = None
    defaults_overflowing: dict[str, Any] | None = None
    tuned: Tuned | None = None
    formula: dict[str, FormulaCheck] | None = None  # by arch
    emitted: Emitted | None = None
    emitted_all_fit: bool | None = None


KIND = StepKind(
    name="triton-moe-configs",
    where="host",
    order=40,
    module="reprokit.workloads.triton_moe_configs",
    summary="sglang's default and tuned Triton fused-MoE configurations sized per arch (formula and Triton"
            " compile); the tuned files refit to SM120",
    needs_pins=("sglang",),
    implemented=True,
    default_timeout_s=1800,
    param_keys=("sglang", "archs", "config_dirs", "compile", "from_device", "device_name", "hidden_size",
                "top_k", "jobs", "emit_arch"),
    inputs=(StepInput("wheel", "the pinned sglang wheel", from_control="sglang-wheel"),),
    pin_params=(PinParam("sglang", pin="sglang"),),
    result=MoeConfigsResult,
)
