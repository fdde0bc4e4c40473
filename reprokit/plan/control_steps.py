"""Steps that run in the control plane, on artifacts already pulled back into the run record.

A control kind names its module (``StepKind.module``); the module's ``run_step`` runs the step and returns
its manifest entry's fields.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from reprokit.records.models import StepEntry
from reprokit.step_kinds import StepKind


def run_control_step(kind: StepKind, params: dict[str, Any], record_dir: Path, steps: dict[str, StepEntry],
                     out_dir: Path) -> dict[str, Any]:
    """Run a step of the control kind ``kind`` and return its entry's fields (status, reason, result, ...)."""
    if kind.where != "control" or not kind.module:
        raise ValueError(f"step kind '{kind.name}' does not run in the control plane")
    return importlib.import_module(kind.module).run_step(params, record_dir, steps, out_dir)
