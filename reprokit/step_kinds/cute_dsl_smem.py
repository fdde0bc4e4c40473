"""``cute-dsl-smem``: the shared memory a CuTe-DSL kernel of a pinned wheel asks for, from its own host code.

The stage count of a CuTe-DSL kernel is Python (``_compute_stages``), and its shared storage is a ``@cute.struct``
class; the workload runs upstream's text of both on a model of CuTe's shape calls, per case and arch (no GPU,
no compiler). Its section: one row per case and arch, the stages and the bytes; the struct of the first overflow.
"""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Part, PinParam, Result, StepInput, StepKind


class StructField(Part):
    name: str
    offset: int
    bytes: int


class CaseSize(Part):
    """One case on one arch: the bytes of its shared storage and the stage counts that sized it."""

    shared_bytes: int
    limit_bytes: int
    fits: bool
    stages: dict[str, int] | None = None
    struct: str | None = None
    fields: list[StructField] | None = None


class CuteDslCase(Part):
    name: str
    why: str | None = None
    model: str | None = None


class CuteDslSmemResult(Result):
    package: str | None = None
    version: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    source: str | None = None
    kernel: str | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    cases: list[CuteDslCase] | None = None
    by_case: dict[str, dict[str, CaseSize]] | None = None  # case name -> arch -> its size
    overflowing: dict[str, Any] | None = None


KIND = StepKind(
    name="cute-dsl-smem",
    where="host",
    order=55,
    module="reprokit.workloads.cute_dsl_smem",
    summary="shared memory of a CuTe-DSL kernel of a pinned wheel: its own stage formula and storage struct, run on"
            " tile shapes (no GPU, no compiler)",
    implemented=True,
    default_timeout_s=300,
    param_keys=("package", "version", "source", "kernel", "setup", "setup_args", "init", "attributes", "struct",
                "bind", "archs", "cases"),
    inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
    pin_params=(PinParam("version", pin_named_by="package"),),
    result=CuteDslSmemResult,
)
