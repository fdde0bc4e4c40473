"""``smem-probe``: the shared-memory limits the driver reports, and launches at the opt-in limit and one byte past it."""

from __future__ import annotations

from typing import Any

from reprokit.step_kinds.base import Part, Result, StepKind


class Launch(Part):
    """A kernel launch with ``dynamic_shared_bytes`` of dynamic shared memory, and what the driver answered."""

    dynamic_shared_bytes: int | None = None
    ok: bool | None = None
    set_attribute_error_name: str | None = None
    error_name: str | None = None
    error_string: str | None = None


class Device(Part):
    index: int | None = None
    launch_at_optin_limit: Launch | None = None
    launch_past_optin_limit: Launch | None = None


class ProbeResult(Result):
    host: dict[str, Any] | None = None
    driver: dict[str, Any] | None = None
    device_count: int | None = None
    devices: list[Device] | None = None


KIND = StepKind(
    name="smem-probe",
    where="host",
    order=10,
    module="reprokit.workloads.smem_probe",
    summary="shared-memory limits from torch and the CUDA driver; kernel launches at the opt-in limit and one byte past it",
    needs_gpu=False,  # it reports 'no CUDA device' itself, with its own exit code
    needs_pins=("torch", "cuda"),
    implemented=True,
    default_timeout_s=180,
    param_keys=("device_indices",),
    result=ProbeResult,
)
