"""The smem-probe kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/smem_probe.py``)."""

from __future__ import annotations

from markupsafe import Markup

from reprokit.draw.tables import html_bytes, md_table
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.report.templating import render_part
from reprokit.step_kinds.smem_probe import (
    KIND,  # noqa: F401 - the kind these sections draw
    Device,
    Launch,
    ProbeResult,
)

LAUNCHES = ("launch_at_optin_limit", "launch_past_optin_limit")
LAUNCH_HEADERS = ["GPU", "dynamic smem (B)", "launch", "cuFuncSetAttribute", "launch error", "driver says"]


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


def html(step: ReportStep) -> list[Markup]:
    rows = [[d.index, (html_bytes(launch.dynamic_shared_bytes), "num"), ("ok", "yes") if launch.ok else ("refused", "no"),
             launch.set_attribute_error_name, launch.error_name, launch.error_string]
            for d, launch in _launches(step.result)]
    if not rows:
        return []
    return render_part("kind_sections/smem_probe.html", headers=LAUNCH_HEADERS, rows=rows)


SECTIONS = (Section("details", markdown=markdown, html=html),)
