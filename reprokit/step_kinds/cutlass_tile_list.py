"""``cutlass-tile-list``: the CUTLASS tile candidates of a GEMM in a pinned wheel's header, their autotuner tactics
and the mainloop bytes of the tiles whose stage count the launcher fixes (no compiler). It answers whether a
release still offers a tile that cannot launch on the arch: a regression guard across releases.
"""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Part, PinParam, Result, StepInput, StepKind


class TileRow(Part):
    tile: str
    tactics: list[int]
    stages: Any = None  # a count, or "auto" (StageCountAutoCarveout)
    stage_bytes: int | None = None
    mainloop_bytes: int | None = None
    kernel_bytes: int | None = None  # mainloop + the kit's epilogue_bytes, when it gives them
    limit_bytes: int | None = None
    overflows: bool | None = None


class TileListResult(Result):
    package: str | None = None
    version: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    source: str | None = None
    launcher: str | None = None
    tiles: list[str] | None = None
    fixed_stages: dict[str, Any] | None = None
    archs: list[str] | None = None
    by_arch: dict[str, list[TileRow]] | None = None
    overflowing: dict[str, list[str]] | None = None
    overflowing_tactics: dict[str, list[int]] | None = None


KIND = StepKind(
    name="cutlass-tile-list",
    where="host",
    order=56,
    module="reprokit.workloads.cutlass_tile_list",
    summary="the CUTLASS tile candidates of a GEMM in a pinned wheel's header, their tactics, and the mainloop"
            " bytes of fixed-stage tiles against the arch (no compiler): a regression guard across releases",
    implemented=True,
    default_timeout_s=300,
    param_keys=("package", "version", "source", "list", "launcher", "a_bytes", "b_bytes", "sf_vec_size", "sf_bytes",
                "epilogue_bytes", "archs"),
    inputs=(StepInput("wheel", "the wheel the header comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=TileListResult,
)
