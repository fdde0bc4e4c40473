"""The H200 records of evidence/h200-fused-moe-sm90-run read into the per-tactic and autotuner tables."""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.fix.mechanisms import SEEN_ON_GPU, seen_on_gpu, summary_lines
from reprokit.workloads.static_smem import device_table
from reprokit.workloads.static_smem.device_check import merge_attempts

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "evidence" / "h200-fused-moe-sm90-run"
BLOCKLIST = ROOT / "evidence" / "h200-fused-moe-sm90-reduced" / "tactics-blocklist.json"


def test_every_tma_tactic_launched_with_the_predicted_bytes_and_the_sm80_ones_are_named() -> None:
    rows = device_table.tactic_rows(json.loads((RUN / "run2" / "device-check.json").read_text()))
    assert len(rows) == 126
    assert sum(r["outcome"] == "agrees" for r in rows) == 108
    assert all(r["launched"] for r in rows)
    sm80 = [r["tactic"] for r in rows if r["predicted_bytes"] is None]
    assert sm80 == [*range(36, 45), *range(117, 126)]
    by = {r["tactic"]: r for r in rows}
    assert (by[0]["predicted_bytes"], by[0]["launch_bytes"]) == (226816, [226816])
    assert (by[18]["predicted_bytes"], by[18]["launch_bytes"]) == (228352, [228352])
    assert by[37]["launch_bytes"] == [65536] and "fused_moe::run_global" in by[37]["outcome"]
    assert by[117]["launch_bytes"] == [40960] and "cutlass::Kernel<MoeFCGemm>" in by[117]["outcome"]


def test_the_blocked_tactics_were_never_profiled_and_skip_ops_left_gemm1_out() -> None:
    blocked = device_table.blocked_tactics(BLOCKLIST)
    assert blocked == [2, 5, 47]
    logs = {p.stem: p.read_text() for p in sorted((RUN / "run1").glob("autotune-*.log"))}
    got = {r["pass"]: (r["profiled"], r["gemm1"], r["gemm2"], r["blocked_profiled"])
           for r in device_table.autotune_rows(logs, blocked)}
    assert got == {"autotune-plain": (126, 45, 81, [2, 5, 47]), "autotune-blocked": (123, 43, 80, []),
                   "autotune-skip-gemm1": (81, 0, 81, [47])}


def test_a_record_without_a_cross_check_is_a_one_line_error(tmp_path, capsys) -> None:
    (tmp_path / "device-check.json").write_text('{"build": {"built": false}}')
    assert device_table.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'device-check.json'}: not a device-check record")


def test_restarted_tactics_passes_merge_into_one_row_per_tactic() -> None:
    attempts = [{"start": 0, "stopped_after": 1, "rc": 3, "tactic_counts": {"gemm1": 2, "gemm2": 1}},
                {"start": 2, "stopped_after": None, "rc": 0}]
    rows = [{"tactic": 1, "launched": False}, {"tactic": 0, "launched": True}, {"tactic": 2, "launched": True}]
    merged = merge_attempts(attempts, rows)
    assert [r["tactic"] for r in merged["rows"]] == [0, 1, 2]
    assert merged["tactic_counts"] == {"gemm1": 2, "gemm2": 1}
    assert [(a["start"], a["rc"]) for a in merged["attempts"]] == [(0, 3), (2, 0)]


def test_fix_says_what_the_gpu_showed_per_release() -> None:
    assert list(SEEN_ON_GPU) == ["0.6.18"]
    assert "never profiled gemm1 tactics 2, 5 or gemm2 tactic 47" in seen_on_gpu("0.6.18")
    assert seen_on_gpu("0.7.4") == "not seen on a GPU for 0.7.4: the lines above are read from its sources"
    found = {"blocklist": {"honoured": True, "evidence": "e"}, "skip_ops": {"honoured": True, "evidence": "s"},
             "autotune_v2": {"present": False}, "seen_on_gpu": seen_on_gpu("0.7.4")}
    assert summary_lines(found)[-1] == "on a GPU: not seen on a GPU for 0.7.4: the lines above are read from its sources"
    assert len(summary_lines(found)) == 4
