"""``smem-probe``: the shared-memory limits the driver reports, and launches at the opt-in limit and one byte past it."""

from __future__ import annotations

from typing import Any

from reprokit.report.tables import html_bytes, html_table, md_table
from reprokit.step_kinds.base import ReportStep, Result, Section, StepKind

LAUNCHES = ("launch_at_optin_limit", "launch_past_optin_limit")
LAUNCH_HEADERS = ["GPU", "dynamic smem (B)", "launch", "cuFuncSetAttribute", "launch error", "driver says"]


class ProbeResult(Result):
    host: dict[str, Any] | None = None
    driver: dict[str, Any] | None = None
    device_count: int | None = None
    devices: list[dict[str, Any]] | None = None


def markdown(step: ReportStep) -> list[str]:
    probe = step.result
    if not probe or not probe.get("devices"):
        return []
    rows = []
    for d in probe["devices"]:
        for label in LAUNCHES:
            launch = d[label]
            rows.append([d["index"], launch["dynamic_shared_bytes"], "ok" if launch.get("ok") else "refused",
                         launch.get("set_attribute_error_name"), launch.get("error_name"), launch.get("error_string")])
    return ["", "## SMEM probe launches", ""] + md_table(LAUNCH_HEADERS, rows)


def html(step: ReportStep) -> list[str]:
    rows = []
    for device in step.result.get("devices") or []:
        for label in LAUNCHES:
            launch = device.get(label) if isinstance(device, dict) else None
            if isinstance(launch, dict):
                rows.append([device.get("index"), (html_bytes(launch.get("dynamic_shared_bytes")), "num"),
                             ("ok", "yes") if launch.get("ok") else ("refused", "no"),
                             launch.get("set_attribute_error_name"), launch.get("error_name"), launch.get("error_string")])
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
