"""Versions read from the log, and each FlashInfer release mapped with its own tactic table (never another's)."""

import json
import shutil

import pytest
from triage_logs import INIT_FAILURE, RUNNER, flashinfer, lines_bytes, sglang

from reprokit.triage import tactics, triage_files
from reprokit.triage.parser import parse_lines
from reprokit.triage.versions import CLUES, VersionsSeen

GEMM2 = "trtllm::fused_moe::gemm2"
# the gemm2 FINALIZE, non-swapped big tiles (the SM120 init failures) in each of the four numberings
BIG, WIDE = "256x128x128", "128x256x128"
FAILING_FINALIZE = {"0.6.3": {14: WIDE, 15: BIG}, "0.6.8": {20: BIG, 21: WIDE}, "0.6.11": {32: BIG, 33: WIDE},
                    "0.7.4": {26: BIG, 27: WIDE}}
COUNTS = {"0.6.3": 24, "0.6.8": 36, "0.6.11": 60, "0.7.4": 48}


@pytest.mark.parametrize("clue", CLUES, ids=lambda c: f"{c.component}-{c.regex[:20]}")
def test_every_version_clue_reads_its_real_example(clue):
    seen = VersionsSeen()
    seen.scan(clue.example)
    assert list(seen.by_component) == [clue.component]
    assert seen.by_component[clue.component][0][0].isdigit()


def test_versions_and_arch_from_a_log():
    events, stats = parse_lines([
        sglang("Running FlashInfer autotune with cache: /root/.cache/sglang/flashinfer/autotune/0.6.12/sm103/15fc7a2e"
               "db371f48/rank_tp3_pp0_dp0.json", "TP3"),
        "[TensorRT-LLM] TensorRT-LLM version: 0.17.0.post1",
    ])
    assert stats.versions.first() == {"flashinfer": "0.6.12", "tensorrt_llm": "0.17.0.post1"}
    assert stats.versions.archs == ["sm103"]


def test_every_release_from_0_6_0_to_the_newest_has_its_table():
    releases = tactics.known_releases()
    assert releases[0] == "0.6.0" and "0.7.4" in releases and len(releases) == 39
    for version in releases:
        choice = tactics.choose_table([version], "sm120")
        assert (choice.source, choice.table.flashinfer, len(choice.table.tactics) in COUNTS.values()) == (
            "shipped", version, True), version


@pytest.mark.parametrize("version", sorted(FAILING_FINALIZE))
def test_the_failing_finalize_tactics_are_numbered_per_release(version):
    table = tactics.choose_table([version], "sm120").table
    assert len(table.tactics) == COUNTS[version]
    for number, tile in FAILING_FINALIZE[version].items():
        entry = table.lookup(number, GEMM2)
        assert (entry.op, entry.tile, entry.fusion, entry.swap_ab) == (GEMM2, tile, "FINALIZE", False)


def skip_line(tactic):
    return flashinfer(f"[Autotuner]: Skipping tactic {RUNNER} {tactic}, due to failure while profiling: {INIT_FAILURE}",
                      level="DEBUG")


def test_tactic_33_means_128x256_in_0_6_11_and_is_out_of_range_in_0_6_3(tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(lines_bytes([skip_line(33), sglang("The server is fired up and ready to roll!")]))
    row = triage_files([log], flashinfer_version="0.6.11").to_json()["autotune_failures"][0]
    assert (row["op"], row["tile"], row["fusion"], row["mapping"]["status"]) == (GEMM2, "128x256x128", "FINALIZE", "mapped")
    old = triage_files([log], flashinfer_version="0.6.3").to_json()["autotune_failures"][0]
    assert (old["tile"], old["mapping"]["status"], old["mapping"]["reason"]) == (None, "unmapped", "out_of_range")
    assert "24 tactics, numbered 0-23" in old["mapping"]["detail"]


@pytest.mark.parametrize(("lines", "version", "reason"), [
    ([], None, "unknown_version"),
    (["(Worker_PP0 pid=1) 2       0x7c6d /home/u/.cache/flashinfer/0.5.2/120a/cached_ops/x.so(+0x9) [0x7c6d]"], None,
     "no_table"),
    (["/root/.cache/flashinfer/0.6.3/120a/x", "/root/.cache/flashinfer/0.6.8/120a/x"], None, "conflicting_versions"),
    ([], "0.6.15.dev20260718", "no_table"),
    ([sglang("Running FlashInfer autotune with cache: /c/sglang/flashinfer/autotune/0.6.12/sm103/k/r.json")], None,
     "no_table_for_arch"),
], ids=["unknown", "before-0.6.0", "two-versions", "nightly", "sm103"])
def test_an_unmappable_tactic_says_why(tmp_path, lines, version, reason):
    log = tmp_path / "server.log"
    log.write_bytes(lines_bytes(lines + [skip_line(15)]))
    report = triage_files([log], flashinfer_version=version).to_json()
    mapping = report["autotune_failures"][0]["mapping"]
    assert (mapping["status"], mapping["reason"], report["flashinfer"]["tactics_reason"]) == ("unmapped", reason, reason)
    assert mapping["detail"]


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.skipif(shutil.which("nvcc") is None and not shutil.which("/usr/local/bin/nvcc"),
                    reason="computing a table compiles FlashInfer's getTactics with nvcc")
def test_a_table_is_computed_from_the_wheel_then_cached(tmp_path, monkeypatch):
    """The real static analysis: pip download of the 0.6.11 wheel, nvcc (about a minute cold, a second warm)."""
    monkeypatch.setattr(tactics, "TACTICS_DIR", tmp_path / "shipped")  # nothing shipped: it must compute
    target = tmp_path / "cache" / "flashinfer-0.6.11.json"
    monkeypatch.setattr(tactics, "cache_dir", lambda: target.parent)
    computed = tactics.choose_table(["0.6.11"], "sm120", compute=True)
    assert (computed.source, len(computed.table.tactics)) == ("computed", 60)
    assert computed.table.lookup(32, GEMM2).tile == "256x128x128"
    assert json.loads(target.read_text())["source"]["counts"] == {"trtllm::fused_moe::gemm1": 20, GEMM2: 40}
    again = tactics.choose_table(["0.6.11"], "sm120", compute=True)
    assert (again.source, again.table.tactics) == ("cache", computed.table.tactics)
    assert tactics.choose_table(["0.6.11"], "sm120").source == "cache"
