"""The fit table: which releases it covers, what a cell holds, the docs page, and the committed data itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from reprokit.fix import fit_table

REPO = Path(__file__).resolve().parents[3]

GEMM1, GEMM2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"


def test_final_releases_from_0_5_0_oldest_first() -> None:
    index = ["0.7.5rc1", "0.7.4", "0.7.2.post1", "0.7.2", "0.6.16.post4", "0.6.16", "0.5.0", "0.4.1", "0.7.0.dev3"]
    assert fit_table.table_releases(index) == ["0.5.0", "0.6.16", "0.7.2", "0.7.4"]


def test_cells_of_the_table() -> None:
    assert fit_table.cell_specs("sm120,sm90", "auto") == [("sm120", "nvfp4"), ("sm90", "nvfp4"), ("sm90", "fp8"),
                                                          ("sm90", "bf16")]
    assert fit_table.cell_specs("sm100", "nvfp4,fp8") == [("sm100", "nvfp4"), ("sm100", "fp8")]


def test_an_arch_without_kernels_is_one_line() -> None:
    empty = {"rows": [], "tactic_counts": {GEMM1: 0, GEMM2: 0}, "failing_tactics": {GEMM1: [], GEMM2: []},
             "failing_tiles": [], "fitting_tiles": [], "unsupported_tiles": [], "capacity_bytes": 232448,
             "sources": {"cutlass": {"version": "4.2.1"}, "wheel": {"sha256": "ab"}, "flashinfer_git_commit": "cd"},
             "notes": ["flashinfer 0.6.3 has no TMA warp-specialized nvfp4 MoE tactics for sm90 (its runner returns none)"],
             "dtype": "nvfp4", "arch": "sm90"}
    cell = fit_table.summarize(empty)
    assert (cell["status"], cell["reason"]) == ("no_kernels", empty["notes"][0])
    table = {"cells": {f"{v}/sm90/nvfp4": {**cell, "flashinfer": v, "arch": "sm90", "dtype": "nvfp4"}
                       for v in ("0.6.3", "0.6.18")}}
    page = fit_table.render_markdown(table)
    assert ("No nvfp4 kernels on sm90 in any of the 2 readable releases (0.6.3-0.6.18): flashinfer 0.6.3 has no TMA "
            "warp-specialized nvfp4 MoE tactics for sm90 (its runner returns none).") in page
    assert "| 0.6.3 |" not in page


def test_the_committed_table_covers_every_release_and_arch() -> None:
    cells = fit_table.load()["cells"]
    per_arch = Counter(c["arch"] for c in cells.values() if c["dtype"] == "nvfp4")
    assert min(per_arch[a] for a in fit_table.TABLE_ARCHES) >= 15, per_arch
    pinned = cells["0.6.3/sm120/nvfp4"]
    assert (pinned["failing_tactics"], pinned["failing_tiles"]) == ({GEMM1: [], GEMM2: [14, 15]},
                                                                   ["128x256x128", "256x128x128"])
    assert {f["kernel_smem_bytes"] for f in pinned["failing"]} == {102400}
    newest_0_6 = cells["0.6.18/sm120/nvfp4"]  # flashinfer issue 4841: 14 of 60 cannot run
    assert newest_0_6["tactics"] == 60 and newest_0_6["failing_tactics"][GEMM2] == [32, 33]
    assert len(newest_0_6["dispatch_rejected_tactics"]) == 12
    assert cells["0.7.4/sm120/nvfp4"]["failing_tactics"][GEMM2] == [26, 27]
    assert cells["0.7.4/sm120/nvfp4"]["dispatch_rejected_tactics"] == []
    for version in ("0.5.0", "0.5.1", "0.5.2"):
        assert cells[f"{version}/sm120/nvfp4"]["status"] == "unreadable"
        assert "INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM takes 14 arguments" in cells[f"{version}/sm120/nvfp4"]["reason"]
    sm90 = [c for c in cells.values() if c["arch"] == "sm90" and c["dtype"] == "nvfp4" and c["status"] != "unreadable"]
    assert sm90 and {c["status"] for c in sm90} == {"no_kernels"}


def test_the_vllm_kit_expects_the_failures_its_pinned_release_has_in_the_table() -> None:
    kit = yaml.safe_load((REPO / "kits" / "ep8-crash-vllm.yml").read_text())
    expected = next(e for e in kit["expect"] if e["name"] == "failures-are-the-big-tiles")
    cell = fit_table.cell(kit["pins"]["flashinfer-python"], "sm120")
    assert cell is not None and expected["path"] == "autotune_failure_tiles"
    assert sorted(expected["contains_all"]) == sorted(cell["failing_tiles"]) == ["128x256x128", "256x128x128"]
    assert [t for tactics in cell["failing_tactics"].values() for t in tactics] == [32, 33]
    assert {f["kernel_smem_bytes"] for f in cell["failing"]} == {102400}
    # the dispatcher's refusals are logged as skipped tactics too: why the kit compares tiles, not tactic numbers
    assert cell["dispatch_rejected_tactics"] == [4, 5, 14, 15, 24, 25, 34, 35, 44, 45, 54, 55]
