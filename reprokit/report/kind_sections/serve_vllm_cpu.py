"""The serve-vllm-cpu kind's sections of the reports: the serve kind's, since its result has that shape."""

from __future__ import annotations

from reprokit.report.kind_sections.base import Section
from reprokit.report.kind_sections.serve import html, markdown
from reprokit.step_kinds.serve_vllm_cpu import KIND  # noqa: F401 - the kind these sections draw

SECTIONS = (Section("findings", markdown=markdown, html=html),)
