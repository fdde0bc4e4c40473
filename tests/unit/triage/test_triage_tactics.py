"""The tactic-to-tile table: how it fills in what the log does not say, and how a bad one is refused."""

import json
from pathlib import Path

import pytest
from triage_logs import INIT_FAILURE, RUNNER, dispatch_frame, flashinfer, lines_bytes, sglang

from reprokit.errors import ConfigError
from reprokit.triage import tactics, triage_files
from reprokit.triage.tactics import load_tactic_table

GEMM1, GEMM2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"
LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def entry(op, tactic, tile, tile_enum, fusion="NONE", swap_ab=False):
    return {"op": op, "tactic": tactic, "tile": tile, "tile_enum": tile_enum, "fusion": fusion, "swap_ab": swap_ab}


def write_table(path, entries, version="0.6.3"):
    path.write_text(json.dumps({"flashinfer": version, "arch": "sm120", "tactics": entries}), encoding="utf-8")
    return path


def bare_skip(tactic):
    """A 'Skipping tactic' line whose exception names no tile (no backtrace): only the table knows it."""
    return flashinfer(f"[Autotuner]: Skipping tactic {RUNNER} {tactic}, due to failure while profiling: {INIT_FAILURE}")


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "server.log"
    ready = sglang("The server is fired up and ready to roll!")
    path.write_bytes(lines_bytes([bare_skip(2), bare_skip(2), bare_skip(14), ready]))
    return path


@pytest.fixture
def table(tmp_path):
    return write_table(tmp_path / "flashinfer-0.6.3.json", [
        entry(GEMM1, 2, "128x256x128", "CtaShape128x256x64B"),
        entry(GEMM2, 14, "256x128x128", "CtaShape256x128x64B", fusion="FINALIZE", swap_ab=True),
    ])


def test_without_a_table_the_tile_is_unknown(log):
    report = triage_files([log]).to_json()
    assert [(r["op"], r["tactic"], r["tile"], r["count"]) for r in report["autotune_failures"]] == [
        (None, 2, None, 2), (None, 14, None, 1)]
    assert report["autotune_failure_tiles"] == []


def test_the_table_names_op_tile_fusion_and_swap(log, table):
    report = triage_files([log], tactics_file=table).to_json()
    rows = [(r["op"], r["tactic"], r["tile"], r["tile_enum"], r["fusion"], r["swap_ab"], r["tile_source"], r["count"])
            for r in report["autotune_failures"]]
    assert rows == [
        (GEMM1, 2, "128x256x128", "CtaShape128x256x64B", "NONE", False, "tactics_file", 2),
        (GEMM2, 14, "256x128x128", "CtaShape256x128x64B", "FINALIZE", True, "tactics_file", 1),
    ]
    assert report["autotune_failure_tiles"] == ["128x256x128", "256x128x128"]
    assert report["flashinfer"]["tactics_file"] == str(table)
    assert report["notes"] == []


def test_the_version_picks_the_table_in_the_data_directory(log, table, monkeypatch):
    monkeypatch.setattr(tactics, "TACTICS_DIR", table.parent)
    assert triage_files([log], flashinfer_version="0.6.3").to_json()["autotune_failure_tiles"] == [
        "128x256x128", "256x128x128"]
    assert triage_files([log], flashinfer_version="0.6.4").to_json()["autotune_failure_tiles"] == []


def test_the_exception_text_wins_over_a_disagreeing_table_and_says_so(tmp_path, table):
    log = tmp_path / "frames.log"
    log.write_bytes(lines_bytes([bare_skip(2), "1       0x7f3a1c3e21b4 throwRuntimeError + 82",
                                 dispatch_frame((256, 128, 128)), sglang("The server is fired up and ready to roll!")]))
    report = triage_files([log], tactics_file=table).to_json()
    assert [(r["tactic"], r["tile"], r["tile_source"], r["tile_enum"]) for r in report["autotune_failures"]] == [
        (2, "256x128x128", "exception_text", None)]
    assert report["notes"] == [
        f"tactic 2 of {GEMM1}: tile 256x128x128 (exception text) vs 128x256x128 (table) in {table}"]


def test_tactics_numbered_per_op_are_told_apart_by_the_op(tmp_path):
    table = load_tactic_table(write_table(tmp_path / "t.json", [
        entry(GEMM1, 0, "128x128x128", "CtaShape128x128x64B"), entry(GEMM2, 0, "128x256x128", "CtaShape128x256x64B")]))
    assert table.lookup(0, None) is None
    assert table.lookup(0, GEMM2).tile == "128x256x128"


@pytest.mark.parametrize("content, message", [
    ("{", "not valid JSON"),
    ('{"tactics": 3}', "expected an object with a 'tactics' list"),
    ('{"tactics": [1]}', r"tactics\[0\] must be an object"),
    (json.dumps({"tactics": [entry(GEMM1, True, "1x1x1", "e")]}), r"tactics\[0\]\.tactic must be an integer, got True"),
    (json.dumps({"tactics": [entry(GEMM1, 0, "128x128", "e")]}), r"tactics\[0\]\.tile must be 'MxNxK'"),
    (json.dumps({"tactics": [entry(GEMM1, 0, "1x1x1", "e", fusion="SOME")]}), "fusion must be one of NONE, FINALIZE"),
])
def test_a_malformed_table_is_a_config_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "flashinfer-9.9.9.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as raised:
        load_tactic_table(path)
    assert str(raised.value).startswith(str(path))


def test_a_missing_table_given_explicitly_is_a_config_error(tmp_path, log):
    with pytest.raises(ConfigError, match="cannot read tactic table"):
        triage_files([log], tactics_file=tmp_path / "absent.json")


@pytest.mark.skipif(not (tactics.TACTICS_DIR / "flashinfer-0.6.3.json").is_file(),
                    reason="the static analysis has not written the FlashInfer 0.6.3 tactic table yet")
def test_shipped_table_agrees_with_the_tiles_of_the_ep8_fixture():
    """Cross-check with the static analysis: its table and the fixture's backtraces name the same tiles."""
    report = triage_files([LOGS / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz"], flashinfer_version="0.6.3")
    data = report.to_json()
    assert data["notes"] == []
    assert data["autotune_failure_tiles"] == ["128x256x128", "256x128x128"]
    assert {r["tile_enum"] for r in data["autotune_failures"]} == {"CtaShape128x256x64B", "CtaShape256x128x64B"}
