"""`invoke compare`: two run records written through RunRecord, exact deltas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reprokit.commands.records import compare_command
from reprokit.errors import ConfigError, ExitCode
from reprokit.records.atomic import write_json_atomic
from reprokit.records.models import StepEntry, VerdictSummary
from reprokit.records.run_dir import RunRecord
from reprokit.report.compare import compare_runs, render_markdown


def make_record(runs: Path, run_id: str, pins: dict[str, str], verdict: dict[str, Any],
                results: dict[str, tuple[str, dict[str, Any]]]) -> Path:
    record = RunRecord.create(runs, run_id, kit={"name": "ep8-crash"}, pins=pins, host={"name": "rtx-1"},
                              fingerprint={"packages": {"torch": pins.get("torch")}}, verdict=None)
    for name, (uses, result) in results.items():
        write_json_atomic(record.step_dir(name) / "result.json", {"status": "ok", **result})  # as a workload writes it
        record.set_step(StepEntry(name, uses, "ok", result_file=f"steps/{name}/result.json"))
    write_json_atomic(record.dir / "verdict.json", verdict)
    record.update(verdict=VerdictSummary(verdict["verdict"], verdict["summary"]))
    record.finish("complete")
    return record.dir


def expectation(name: str, status: str) -> dict[str, Any]:
    return {"name": name, "step": "x", "status": status, "expected": "", "observed": None, "reason": ""}


def best(problem: str, phase: str, config: str, time_s: float, fraction: float) -> dict[str, Any]:
    return {"problem": problem, "phase": phase, "config": config, "time_median_s": time_s, "fraction_of_roofline": fraction}


def failure(tile: str, count: int) -> dict[str, Any]:
    return {"op": "trtllm::fused_moe::gemm1", "tactic": 2, "tile": tile, "count": count}


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a = make_record(
        tmp_path, "run-a", {"flashinfer-python": "0.6.3", "torch": "2.9.1"},
        {"verdict": "PASS", "summary": "all 3 expectations held",
         "expectations": [expectation("big-tiles-overflow", "PASS"), expectation("ready", "PASS"), expectation("kept", "PASS")]},
        {"static-smem": ("static-smem", {"flashinfer": "0.6.3", "arch": "sm120", "capacity_bytes": 101376,
                                          "failing_tiles": ["128x256x128", "256x128x128"],
                                          "fitting_tiles": ["128x128x128", "128x128x256"], "unsupported_tiles": []}),
         "sweep": ("tile-sweep", {"roofline": {"copy_gbps": 4000.0, "dense_gemm_tflops": 800.0},
                                  "best": [best("ep8-gemm1-t1", "decode", "m16n64k128s4w4", 4e-4, 0.8),
                                           best("ep8-gemm1-t2048", "prefill", "m128n256k64s3w8", 2e-3, 0.5),
                                           best("only-a", "decode", "c", 1e-4, 0.1)]}),
         "triage": ("triage", {"verdict": "READY_WITH_NONFATAL_AUTOTUNE_FAILURES", "ready": True,
                               "autotune_failures": [failure("128x256x128", 96), failure("256x128x128", 96)]})})
    b = make_record(
        tmp_path, "run-b", {"flashinfer-python": "0.6.8", "torch": "2.9.1", "sglang": "0.5.10"},
        {"verdict": "FAIL", "summary": "1 of 3 expectations did not hold",
         "expectations": [expectation("big-tiles-overflow", "FAIL"), expectation("ready", "PASS"), expectation("new", "INCONCLUSIVE")]},
        {"static-smem": ("static-smem", {"flashinfer": "0.6.8", "arch": "sm120", "capacity_bytes": 101376,
                                          "failing_tiles": ["128x128x256"],
                                          "fitting_tiles": ["128x128x128", "128x256x128"],
                                          "unsupported_tiles": ["256x128x128"]}),
         "sweep": ("tile-sweep", {"roofline": {"copy_gbps": 2000.0, "dense_gemm_tflops": 800.0},
                                  "best": [best("ep8-gemm1-t1", "decode", "m16n64k128s3w4", 2e-4, 1.0),
                                           best("ep8-gemm1-t2048", "prefill", "m128n256k64s3w8", 4e-3, 0.25),
                                           best("only-b", "decode", "c", 1e-4, 0.1)]}),
         "triage": ("triage", {"verdict": "READY", "ready": True, "autotune_failures": [failure("128x128x256", 16)]})})
    return a, b


def test_exact_deltas(two_runs: tuple[Path, Path]) -> None:
    diff = compare_runs(*two_runs)
    assert diff["verdict"] == {"a": "PASS", "b": "FAIL", "changed": True}
    assert diff["pins"] == {"flashinfer-python": {"a": "0.6.3", "b": "0.6.8"}, "sglang": {"a": None, "b": "0.5.10"}}
    assert diff["installed"] == {}
    assert diff["expectations"] == [{"name": "big-tiles-overflow", "a": "PASS", "b": "FAIL"},
                                    {"name": "kept", "a": "PASS", "b": None},
                                    {"name": "new", "a": None, "b": "INCONCLUSIVE"}]
    assert diff["expectations_unchanged"] == 1
    smem = diff["static_smem"]
    assert smem["newly_fit"] == ["128x256x128"]
    assert smem["newly_fail"] == ["128x128x256"]
    assert smem["tiles"] == {"128x256x128": {"a": "fails", "b": "fits"}, "256x128x128": {"a": "fails", "b": "unsupported"},
                             "128x128x256": {"a": "fits", "b": "fails"}}
    assert (smem["a"]["flashinfer"], smem["b"]["flashinfer"]) == ("0.6.3", "0.6.8")
    sweep = diff["sweep"]
    assert sweep["ceilings"] == {"copy_gbps": {"a": 4000.0, "b": 2000.0, "ratio": 0.5},
                                 "dense_gemm_tflops": {"a": 800.0, "b": 800.0, "ratio": 1.0}}
    assert [(p["problem"], p["config_a"], p["config_b"], p["time_ratio"], p["fraction_ratio"]) for p in sweep["problems"]] == [
        ("ep8-gemm1-t1", "m16n64k128s4w4", "m16n64k128s3w4", 0.5, 1.25),
        ("ep8-gemm1-t2048", "m128n256k64s3w8", "m128n256k64s3w8", 2.0, 0.5)]
    assert (sweep["only_in_a"], sweep["only_in_b"]) == (["only-a"], ["only-b"])
    triage = diff["triage"]
    assert triage["verdict"] == {"a": "READY_WITH_NONFATAL_AUTOTUNE_FAILURES", "b": "READY", "changed": True}
    assert triage["failures"] == {"a": 192, "b": 16, "delta": -176}
    assert triage["failures_by_tile"] == {"128x128x256": {"a": 0, "b": 16, "delta": 16},
                                          "128x256x128": {"a": 96, "b": 0, "delta": -96},
                                          "256x128x128": {"a": 96, "b": 0, "delta": -96}}
    assert diff["notes"] == []


def test_markdown(two_runs: tuple[Path, Path]) -> None:
    text = render_markdown(compare_runs(*two_runs))
    assert "**Verdict**: PASS -> FAIL (changed)" in text
    assert "| flashinfer-python | 0.6.3 | 0.6.8 |" in text
    assert "## Expectations (3 changed, 1 unchanged)" in text
    assert "| big-tiles-overflow | PASS | FAIL |" in text
    assert "Newly fit: 128x256x128. Newly fail: 128x128x256." in text
    assert "| copy_gbps | 4000 | 2000 | 0.5 |" in text
    assert "| ep8-gemm1-t1 | m16n64k128s4w4 | m16n64k128s3w4 | 400.0 | 200.0 | 0.5 | 0.8 | 1 | 1.25 |" in text
    assert "autotune failures 192 -> 16 (-176)." in text
    assert "| 128x256x128 | 96 | 0 | -96 |" in text


def test_a_run_against_itself_changes_nothing(two_runs: tuple[Path, Path]) -> None:
    diff = compare_runs(two_runs[0], two_runs[0])
    assert diff["verdict"]["changed"] is False
    assert (diff["pins"], diff["expectations"], diff["expectations_unchanged"]) == ({}, [], 3)
    assert (diff["static_smem"]["newly_fit"], diff["static_smem"]["newly_fail"], diff["static_smem"]["tiles"]) == ([], [], {})
    assert {p["time_ratio"] for p in diff["sweep"]["problems"]} == {1.0}
    assert diff["triage"]["failures"]["delta"] == 0


def test_a_step_present_on_one_side_only(tmp_path: Path, two_runs: tuple[Path, Path]) -> None:
    bare = make_record(tmp_path, "run-bare", {"flashinfer-python": "0.6.3", "torch": "2.9.1"},
                       {"verdict": "INCONCLUSIVE", "summary": "", "expectations": []}, {})
    diff = compare_runs(two_runs[0], bare)
    assert (diff["static_smem"], diff["sweep"], diff["triage"]) == (None, None, None)
    assert diff["notes"] == ["step 'static-smem' has a result only in A; not compared",
                             "step 'tile-sweep' has a result only in A; not compared",
                             "step 'triage' has a result only in A; not compared"]


def test_a_result_that_does_not_match_its_kind_is_not_compared(tmp_path: Path, two_runs: tuple[Path, Path]) -> None:
    # the runner made such a step its error; the comparison reads results as their kinds' models, so it has none
    wrong = make_record(tmp_path, "run-wrong", {"flashinfer-python": "0.6.3", "torch": "2.9.1"},
                        {"verdict": "INCONCLUSIVE", "summary": "", "expectations": []},
                        {"sweep": ("tile-sweep", {"best": [{"problem": "p1", "time_median_s": "4e-4"}]})})
    diff = compare_runs(two_runs[0], wrong)
    assert diff["sweep"] is None and "step 'tile-sweep' has a result only in A; not compared" in diff["notes"]


def test_cli_json_and_exit_code(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert compare_command(str(two_runs[0]), str(two_runs[1]), [], as_json=True) == ExitCode.PASS == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["static_smem"]["newly_fail"] == ["128x128x256"]
    assert compare_command(str(two_runs[0]), str(two_runs[1]), [], as_json=False) == 0
    assert capsys.readouterr().out.startswith("# Compare: run-a (A) vs run-b (B)\n")
    # by id, under the runs directory; a regression fails only when asked to
    assert compare_command("run-a", "run-b", [str(two_runs[0].parent)], fail_on_regression=True) == ExitCode.FAIL
    assert "**Regressions** (worse than A by more than 5%): " in capsys.readouterr().out


def test_not_a_run_record(tmp_path: Path, two_runs: tuple[Path, Path]) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=r"nope: not a run record \(no such directory\)") as exc:
        compare_runs(two_runs[0], missing)
    assert exc.value.exit_code == ExitCode.BAD_INPUT and "\n" not in str(exc.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match=r"empty/manifest.json: no manifest"):
        compare_runs(empty, two_runs[1])
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"hello": 1}')
    with pytest.raises(ConfigError, match=r"other/manifest.json: not a (reprokit )?run manifest"):
        compare_runs(two_runs[0], other)
    with pytest.raises(ConfigError, match=r"verdict.json: not a run record \(a file, not a directory\)"):
        compare_runs(two_runs[0] / "verdict.json", two_runs[1])
