"""``smem-probe``: the shared-memory limits the driver reports, and launches at the opt-in limit and one byte past it."""

from __future__ import annotations

from typing import Any

from reprokit.draw.tables import html_bytes, html_table, md_table
from reprokit.step_kinds.base import Part, ReportStep, Result, Section, StepKind

LAUNCHES = ("launch_at_optin_limit", "launch_past_optin_limit")
LAUNCH_HEADERS = ["GPU", "dynamic smem (B)", "launch", "cuFuncSetAttribute", "launch error", "driver says"]


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


def _launches(probe: ProbeResult) -> list[tuple[Device, Launch]]:
    return [(device, launch) for device in probe.devices or [] for label in LAUNCHES
            if (launch := getattr(device, label)) is not None]


def markdown(step: ReportStep) -> list[str]:
    probe: ProbeResult = step.result
    if not probe.devices:
        return []
    rows = [[d.index, launch.dynamic_shared_bytes, "ok" if launch.ok else "refused", launch.set_attribute_error_name,
             launch.error_name, launch.error_string] for d, launch in _launches(probe)]
    return ["", "## SMEM probe launches", ""] + md_table(LAUNCH_HEADERS, rows)


def html(step: ReportStep) -> list[str]:
    rows = [[d.index, (html_bytes(launch.dynamic_shared_bytes), "num"), ("ok", "yes") if launch.ok else ("refused", "no"),
             launch.set_attribute_error_name, launch.error_name, launch.error_string]
            for d, launch in _launches(step.result)]
    if not rows:
        return []
    return ["<h2>SMEM probe launches</h2>", html_table(LAUNCH_HEADERS, rows, "probe-launches")]


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
    sections=(Section("details", markdown=markdown, html=html),),
)
