"""The fit table's cell of a release, as the static prediction that triage sets beside a log's failed tactics.

``invoke triage`` has no static-smem step to read: the fit table (``reprokit/data/fit-table.json``) holds the
same analysis for every release, per arch and dtype. A cell keeps the failing tactics with their bytes, the
tactics the dispatcher rejects, and the default tactics' bytes; the release's tactic table (shipped with the
triage) gives the other tactics' tiles, which the analysis found to fit.
"""

from __future__ import annotations

from pathlib import Path

from reprokit.fix import fit_table
from reprokit.triage.reconcile import Prediction, prediction_from_fit_cell
from reprokit.triage.tactics import choose_table
from reprokit.workloads.facts.exits import StepStatus

MOE_DTYPE = "nvfp4"  # the CUTLASS fused MoE the triage reads tactics of (the kits' NVFP4 models)


def predict(version: str, arch: str, table_path: Path = fit_table.DATA_FILE) -> Prediction | None:
    """The prediction for FlashInfer ``version`` on ``arch`` (NVFP4), or None when the table has no usable cell."""
    cell = fit_table.cell(version, arch, MOE_DTYPE, table_path)
    if cell is None or cell.get("status") != StepStatus.OK:
        return None
    choice = choose_table([version], arch)
    if choice.table is None:
        return None
    entries = [(t.tactic, t.op, t.tile, t.fusion, t.swap_ab) for t in choice.table.tactics]
    source = f"fit table {fit_table.cell_key(version, arch, MOE_DTYPE)} ({table_path.name})"
    return prediction_from_fit_cell(cell, source, entries)
