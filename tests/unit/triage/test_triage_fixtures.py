"""Exact counts and verdicts on fixture logs written in the upstream formats (tests/fixtures/logs)."""

import gzip
import json
from pathlib import Path

import pytest

from reprokit.triage import EXIT_CODES, LogVerdict, render_table, triage_files

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
EP8 = LOGS / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz"
VLLM = LOGS / "vllm-dp8-ep8-0.6.8-ready-autotune-failures.log"
FATAL = LOGS / "sglang-ep8-warmup-fatal.log"
TRUNCATED = LOGS / "sglang-ep8-truncated-during-autotune.log"
HIDDEN = LOGS / "sglang-0.6.8-info-level-hidden-tactics.log"
CLEAN = LOGS / "sglang-tp1-ready-clean-crlf.log"

RANKS, PROFILES = 8, 2
# FlashInfer 0.6.3 on SM120: only gemm2's FINALIZE no-swap kernels of the big tiles exceed 101376 B (102400 B,
# docs/fit-table.md); their NONE-fused and swap_ab siblings (gemm1 2, 3, 6, 7; gemm2 10, 11, 18, 19, 22, 23) fit
# and are profiled like the small tiles
GEMM2_FAILING = [14, 15]
PROFILED = 24 - len(GEMM2_FAILING)  # each rank and profile times every other tactic ('profiling ... N, shapes=')
FRAMES_PER_RECORD = 11


@pytest.fixture(scope="module")
def ep8():
    """No version given: no tactic table, tiles from the exception text (tables: test_triage_tactics.py)."""
    return triage_files([EP8]).to_json()


def test_ep8_sglang_server_is_ready_with_32_nonfatal_autotune_failures(ep8):
    failures = RANKS * PROFILES * len(GEMM2_FAILING)
    assert failures == 32
    assert (ep8["verdict"], ep8["exit_code"], ep8["ready"], ep8["fatal"]) == (
        "READY_WITH_NONFATAL_AUTOTUNE_FAILURES", 10, True, None)
    assert ep8["autotune_failure_tiles"] == ["128x256x128", "256x128x128"]
    assert sum(row["count"] for row in ep8["autotune_failures"]) == failures
    assert ep8["counts"]["events"]["autotune_skip"] == failures
    assert ep8["counts"]["events"]["autotune_failure_detail"] == failures  # the DEBUG repeat is not a second failure


def test_ep8_failures_grouped_by_op_tactic_tile_fusion_swap(ep8):
    rows = {(r["op"], r["tactic"]): r for r in ep8["autotune_failures"]}
    assert list(rows) == [("trtllm::fused_moe::gemm2", t) for t in GEMM2_FAILING]
    for (_, tactic), row in rows.items():
        assert row["tile"] == ("128x256x128" if tactic % 2 == 0 else "256x128x128")
        assert (row["fusion"], row["swap_ab"]) == ("FINALIZE", False)
        assert (row["count"], row["unattributed"], row["ranks"]) == (RANKS * PROFILES, RANKS * PROFILES, [])
        assert row["tile_source"] == "exception_text"
        assert row["errors"] == [{"message": "Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal",
                                  "count": RANKS * PROFILES}]
        assert row["runners"] == ["MoERunner"]


def test_ep8_counts_lines_by_format(ep8):
    records = 2 * 32  # each failure: the WARNING line and the DEBUG 'Failed when profiling' line
    counts = ep8["counts"]
    assert counts["lines_by_format"]["continuation"] == records * FRAMES_PER_RECORD
    assert counts["lines_by_format"]["flashinfer"] == 8 + records + RANKS * PROFILES * PROFILED + 8
    assert counts["events"]["autotune_profiled"] == RANKS * PROFILES * PROFILED
    assert (counts["lines"], counts["unknown_lines"], counts["truncated_lines"]) == (1242, 0, 0)
    assert sum(counts["lines_by_format"].values()) == counts["lines"]


def test_ep8_timeline_runs_from_weights_to_readiness(ep8):
    timeline = [(t["event"], t["count"], t["first"]) for t in ep8["timeline"]]
    assert timeline == [
        ("load_weight_end", 8, "2026-02-19 10:04:50"),
        ("server_autotune_start", 8, "2026-02-19 10:05:12"),
        ("autotune_process_start", 8, "2026-02-19 10:05:12,118"),
        ("autotune_skip", 32, "2026-02-19 10:05:17,112"),
        ("autotune_process_end", 8, "2026-02-19 10:06:01,907"),
        ("server_autotune_completed", 8, "2026-02-19 10:06:02"),
        ("cuda_graph_capture_begin", 8, "2026-02-19 10:06:02"),
        ("cuda_graph_capture_end", 8, "2026-02-19 10:07:41"),
        ("uvicorn_running", 1, "2026-02-19 10:07:44"),
        ("uvicorn_startup_complete", 1, "2026-02-19 10:07:44"),
        ("ready", 1, "2026-02-19 10:07:49"),
    ]
    assert ep8["timeline"][1]["ranks"] == [f"TP{r} EP{r}" for r in range(8)]


def test_gzip_and_plain_give_the_same_report(ep8, tmp_path):
    plain = tmp_path / "ep8.log"
    plain.write_bytes(gzip.decompress(EP8.read_bytes()))
    report = triage_files([plain]).to_json()
    assert (report["files"][0]["gzip"], ep8["files"][0]["gzip"]) == (False, True)
    without_files = [{k: v for k, v in r.items() if k != "files"} for r in (report, ep8)]
    same_paths = [json.dumps(r).replace(str(path), "LOG") for r, path in zip(without_files, (plain, EP8))]
    assert same_paths[0] == same_paths[1]


def test_vllm_workers_attribute_every_failure_to_its_rank():
    report = triage_files([VLLM]).to_json()
    assert (report["verdict"], report["exit_code"], report["ready"]) == (
        "READY_WITH_NONFATAL_AUTOTUNE_FAILURES", 10, True)
    ranks = [f"DP{r} EP{r}" for r in range(8)]
    rows = [(r["op"][-5:], r["tactic"], r["tile"], r["fusion"], r["count"], r["ranks"], r["unattributed"])
            for r in report["autotune_failures"]]
    assert rows == [
        ("gemm1", 3, "128x256x128", "NONE", 8, ranks, 0),  # Error Internal at initialisation
        ("gemm1", 4, "128x128x512", "NONE", 8, ranks, 0),  # CtaShape128x128x256B: not in the SM120 dispatch switch
        ("gemm2", 17, "256x128x256", "NONE", 8, ranks, 0),  # CtaShape256x128x128B: not in the switch either
        ("gemm2", 20, "256x128x128", "FINALIZE", 8, ranks, 0),
    ]
    assert [(s["op"][-5:], s["skipped"], s["count"]) for s in report["autotune_skipped_summaries"]] == [
        ("gemm1", 16, 8), ("gemm2", 16, 8)]
    assert report["counts"]["unknown_lines"] == 0


def test_warmup_crash_is_fatal_with_its_cause_and_first_traceback():
    report = triage_files([FATAL]).to_json()
    fatal = report["fatal"]
    assert (report["verdict"], report["exit_code"], report["ready"]) == ("FATAL", 11, False)
    assert (fatal["kind"], fatal["cause"], fatal["rank"], fatal["location"]) == (
        "process_exception", "cuda_illegal_memory_access", "TP5 EP5", f"{FATAL}:10")
    assert fatal["exception"] == (
        "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered")
    # the shell's 'Killed' at the end is a death notice too (bash's report of a SIGKILLed child)
    assert fatal["count_by_kind"] == {"process_exception": 1, "sigquit_from_child": 1, "shell_killed": 1}
    assert fatal["traceback"].count("Traceback (most recent call last):") == 2
    assert "During handling of the above exception" in fatal["traceback"]
    assert report["counts"]["unknown_lines"] == 0


def test_a_log_cut_during_autotuning_is_not_ready():
    report = triage_files([TRUNCATED]).to_json()
    assert (report["verdict"], report["exit_code"], report["ready"], report["fatal"]) == ("NOT_READY", 12, False, None)
    assert report["files"][0]["ends_mid_line"] is True
    assert "cut off" in report["reason"]
    assert sum(r["count"] for r in report["autotune_failures"]) == 12
    # the last record lost its CutlassMoeFCRunner::gemm1 frame to the cut; the JIT cache path in its
    # message names FlashInfer 0.6.3, whose table says tactic 3 is gemm1's 256x128x128
    assert report["flashinfer"]["version"] == "0.6.3" and report["flashinfer"]["tactics_source"] == "shipped"
    rows = [(r["op"], r["tactic"], r["count"], r["mapping"]["status"]) for r in report["autotune_failures"]]
    assert rows[-1] == ("trtllm::fused_moe::gemm1", 3, 4, "mapped")
    assert all(r["op"] is not None for r in report["autotune_failures"])


def test_hidden_per_tactic_lines_are_inconclusive_and_say_what_to_set():
    report = triage_files([HIDDEN]).to_json()
    assert (report["verdict"], report["exit_code"], report["ready"]) == ("INCONCLUSIVE", 13, True)
    assert report["env"] == {"FLASHINFER_LOGGING_LEVEL": "debug"}
    assert "FLASHINFER_LOGGING_LEVEL=debug" in report["hint"] and ">= 0.6.8" in report["hint"]
    assert report["flashinfer"]["version"] == "0.6.8" and report["flashinfer"]["version_source"] == "log"
    skipped = [(s["op"][-5:], s["skipped"]) for s in report["autotune_skipped_summaries"]]
    assert skipped == [("gemm1", 16), ("gemm2", 32)]
    assert report["counts"]["lines_by_format"] == {"blank": 2, "flashinfer": 20, "progress": 6, "sglang": 15}


def test_clean_crlf_log_is_ready():
    report = triage_files([CLEAN]).to_json()
    assert (report["verdict"], report["exit_code"], report["autotune_failures"]) == ("READY", 0, [])
    assert (report["counts"]["lines"], report["counts"]["unknown_lines"]) == (14, 0)


def test_several_files_fatal_wins_and_everything_is_json():
    report = triage_files([EP8, FATAL])
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data
    assert report.verdict is LogVerdict.FATAL and report.exit_code == EXIT_CODES[LogVerdict.FATAL]
    assert data["counts"]["files"] == 2 and sum(r["count"] for r in data["autotune_failures"]) == 32


def test_render_table_names_the_verdict_tiles_and_cause():
    text = render_table(triage_files([EP8]))
    assert text.startswith("verdict: READY_WITH_NONFATAL_AUTOTUNE_FAILURES (exit 10)")
    assert "128x256x128" in text and "256x128x128" in text and "16 unattributed" in text
    fatal_text = render_table(triage_files([FATAL]))
    assert "cause: cuda_illegal_memory_access" in fatal_text
    lines = fatal_text.splitlines()
    died = next(i for i, line in enumerate(lines) if line.startswith("died: "))
    assert died < next(i for i, line in enumerate(lines) if line == "timeline")  # the death comes before the tables
    assert lines[died + 2:died + 4] == ["  | ... 20 line(s) before (all of it: --json, or the log)",
                                        "  |     self.tp_worker = TpModelWorker("]  # the traceback's last 12 lines
