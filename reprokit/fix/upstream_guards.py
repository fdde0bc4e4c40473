"""Upstream's own SM12x tile filter, checked against the static table: which failing tactics would it let through?

FlashInfer PR 2927 (2026-03-31) added ``tile_fits_smem(sm, m, n, k_elem, config, stages=2)`` to
``cutlass_heuristic.cpp`` with 102400 B as the SM 8.6/8.9/12.x limit: the shared memory per SM, not the
101376 B a block may opt in to. A kernel whose real ``sizeof(SharedStorage)`` is 102400 B passes such a filter
and still cannot start. Whether a release carries the filter is read from its wheel; where it does, its limit
constants are read from the function's text; where it does not, the section says so and sets the PR's figure
against the table, so the report shows which failing tactics that filter would not have caught.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

HEURISTIC = "flashinfer/data/csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.cpp"
PR_2927_LIMIT = 102400
FILTER = "tile_fits_smem"


def release_filter(wheel: Path) -> dict[str, Any]:
    """Whether the release's heuristic has the filter, where, and the byte constants its body compares against."""
    with zipfile.ZipFile(wheel) as zf:
        try:
            text = zf.read(HEURISTIC).decode("utf-8", "replace")
        except KeyError:
            return {"present": False, "evidence": f"{wheel.name} has no {HEURISTIC}"}
    match = re.search(rf"\b{FILTER}\s*\(", text)
    candidates = re.search(r"get_candidate_configs_sm120\s*\(", text)
    if match is None:
        where = (f"{HEURISTIC}:{text[:candidates.start()].count(chr(10)) + 1} get_candidate_configs_sm120 has no "
                 "shared-memory filter" if candidates else f"{HEURISTIC} has no get_candidate_configs_sm120")
        return {"present": False, "evidence": f"no {FILTER} in {HEURISTIC}; {where}"}
    body = text[match.start():match.start() + 3000]
    limits = sorted({int(n) for n in re.findall(r"\b(\d{5,6})\b", body) if 65536 <= int(n) <= 262144})
    return {"present": True, "evidence": f"{HEURISTIC}:{text[:match.start()].count(chr(10)) + 1} {FILTER}",
            "limits": limits}


def let_through(failing: list[dict[str, Any]], filter_limit: int) -> list[dict[str, Any]]:
    """The failing tactics whose real SharedStorage is within the filter's limit: a filter at that figure cannot reject them."""
    return [f for f in failing if f["kernel_smem_bytes"] <= filter_limit]


def section(version: str, wheel: Path | None, failing: list[dict[str, Any]], optin_limit: int) -> list[str]:
    """The report's lines: the release's filter (or its absence) and the failing tactics it lets through."""
    lines = ["## Upstream's own tile filter, checked", ""]
    found = release_filter(wheel) if wheel is not None else {"present": False,
                                                             "evidence": "the release's wheel is not at hand"}
    limits = found.get("limits") or []
    if found["present"]:
        figure = min(limits) if limits else PR_2927_LIMIT  # the smallest constant is the SM12x one
        lines.append(f"FlashInfer {version} filters SM12x tiles ({found['evidence']}, limit constants "
                     f"{', '.join(map(str, limits)) or 'not found in its body'}); set against this table with "
                     f"{figure} B:")
    else:
        figure = PR_2927_LIMIT
        lines.append(f"FlashInfer {version} has no such filter ({found['evidence']}). PR 2927's `{FILTER}` compared "
                     f"against {PR_2927_LIMIT} B, the shared memory per SM; set against this table:")
    through = let_through(failing, figure)
    lines.append("")
    if not failing:
        lines.append(f"no tactic of this release exceeds {optin_limit} B, so there is nothing for it to catch.")
    elif through:
        names = ", ".join(f"{f['op'].rsplit('::', 1)[-1]} tactic {f['tactic']} ({f['tile']} {f['fusion']}, "
                          f"{f['kernel_smem_bytes']} B)" for f in through)
        lines.append(f"it lets through {len(through)} of the {len(failing)} failing tactics: {names}. Each is within "
                     f"{figure} B and over the {optin_limit} B opt-in limit per block that `cudaFuncSetAttribute` "
                     "enforces; the filter must compare with `cudaDevAttrMaxSharedMemoryPerBlockOptin` and the "
                     "kernel's `sizeof(SharedStorage)`, not an estimate against the per-SM figure.")
    else:
        lines.append(f"it would reject all {len(failing)} failing tactics: each exceeds {figure} B.")
    return [*lines, ""]
