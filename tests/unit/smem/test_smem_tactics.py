"""The committed tactic tables: autotuner tactic int -> tile, fusion, swap_ab.

They were generated from the wheels by ``python -m reprokit.workloads.static_smem.tactics``;
the ``network`` test regenerates one and compares.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.workloads.facts.tiles import parse_enum_name
from reprokit.workloads.static_smem.analysis import tactic_entries

TACTICS_DIR = Path(__file__).resolve().parents[3] / "reprokit" / "data" / "tactics"
REQUIRED = {"op": str, "tactic": int, "tile": str, "tile_enum": str, "fusion": str, "swap_ab": bool}
GEMM1, GEMM2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"


def table(version: str) -> dict:
    return json.loads((TACTICS_DIR / f"flashinfer-{version}.json").read_text())


def by_tactic(version: str) -> dict[int, dict]:
    return {t["tactic"]: t for t in table(version)["tactics"]}


@pytest.mark.parametrize("version", ["0.6.3", "0.6.7", "0.6.8"])
def test_schema_the_triage_reads(version: str) -> None:
    data = table(version)
    assert data["flashinfer"] == version and data["arch"] == "sm120"
    for entry in data["tactics"]:
        for key, kind in REQUIRED.items():
            assert isinstance(entry[key], kind), (key, entry)
        assert entry["fusion"] in ("NONE", "FINALIZE")
        assert parse_enum_name(entry["tile_enum"]).tile(4) == entry["tile"]  # K bytes -> FP4 elements


@pytest.mark.parametrize("version", ["0.6.3", "0.6.7", "0.6.8"])
def test_tactic_ints_number_gemm1_then_gemm2(version: str) -> None:
    tactics = table(version)["tactics"]
    assert [t["tactic"] for t in tactics] == list(range(len(tactics)))
    ops = [t["op"] for t in tactics]
    first_gemm2 = ops.index(GEMM2)
    assert set(ops[:first_gemm2]) == {GEMM1} and set(ops[first_gemm2:]) == {GEMM2}
    assert table(version)["source"]["counts"] == {GEMM1: first_gemm2, GEMM2: len(tactics) - first_gemm2}
    # gemm1 never fuses the finalize; gemm2 has a FINALIZE copy of each tile; then a swap_ab copy of everything
    assert all(t["fusion"] == "NONE" for t in tactics[:first_gemm2])
    gemm2 = tactics[first_gemm2:]
    assert [t["swap_ab"] for t in gemm2] == [False] * (len(gemm2) // 2) + [True] * (len(gemm2) // 2)
    assert sum(t["fusion"] == "FINALIZE" for t in gemm2) == len(gemm2) // 2


def test_0_6_3_tactic_15_is_the_finalize_256x128_tile() -> None:
    tactics = by_tactic("0.6.3")
    assert len(tactics) == 24
    assert {"op": GEMM2, "tile": "256x128x128", "tile_enum": "CtaShape256x128x64B",
                                "fusion": "FINALIZE", "swap_ab": False}.items() <= tactics[15].items()
    assert {"op": GEMM2, "tile": "128x256x128", "fusion": "FINALIZE", "swap_ab": False}.items() <= tactics[14].items()
    assert {"op": GEMM1, "tile": "128x128x256", "tile_enum": "CtaShape128x128x128B"}.items() <= tactics[0].items()
    assert {"op": GEMM2, "tile": "128x128x256", "fusion": "NONE"}.items() <= tactics[8].items()


def test_the_list_changes_in_0_6_8() -> None:
    old, new = by_tactic("0.6.3"), by_tactic("0.6.8")
    assert [t["tile"] for t in table("0.6.7")["tactics"]] == [t["tile"] for t in old.values()]
    assert len(new) == 36
    assert new[15]["tile"] == "128x256x128" and new[15]["fusion"] == "NONE"  # the same int, another kernel
    assert old[15]["tile"] == "256x128x128" and old[15]["fusion"] == "FINALIZE"
    unsupported = [t for t in new.values() if t["dispatch_error"]]
    assert {t["tile_enum"] for t in unsupported} == {"CtaShape128x128x256B", "CtaShape256x128x128B"}
    assert len(unsupported) == 12
    assert unsupported[0]["dispatch_error"] == (
        "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:502)")


def test_tactic_entries_check_the_dispatcher_against_the_conversion() -> None:
    record = {"gemm": 2, "tactic": 15, "index_in_op": 7, "tile_enum_value": 256128064, "fusion": "FINALIZE",
              "swap_ab": False, "launcher": {"TileShape": "256x128x128", "ClusterShape": "1x1x1",
                                             "EpilogueSchedule": "void", "DYNAMIC_CGA": False}}
    [entry] = tactic_entries([record], 4, "sm120")
    assert entry["tile"] == "256x128x128" and entry["tile_enum"] == "CtaShape256x128x64B"
    record["launcher"]["TileShape"] = "256x128x64"  # a dispatcher that kept K in bytes
    with pytest.raises(ValueError, match="dispatcher chose tile 256x128x64"):
        tactic_entries([record], 4, "sm120")


def test_the_triage_loader_accepts_the_tables() -> None:
    triage = pytest.importorskip("reprokit.triage.tactics")
    loaded = triage.load_tactic_table(TACTICS_DIR / "flashinfer-0.6.3.json")
    assert loaded.lookup(15, None).tile == "256x128x128"


@pytest.mark.network
@pytest.mark.slow
def test_regenerated_from_the_wheel_equals_the_committed_table(nvcc, tmp_path: Path) -> None:
    from reprokit.workloads.static_smem.tactics import tactics_document

    document = tactics_document({"flashinfer": "0.6.3", "arch": "sm120", "cache_dir": str(tmp_path / "cache")},
                                tmp_path / "run")
    committed = table("0.6.3")
    assert document["tactics"] == committed["tactics"]
    assert document["source"]["wheel_sha256"] == committed["source"]["wheel_sha256"]
    assert (tmp_path / "run" / "logs" / "tactics.log").is_file()
