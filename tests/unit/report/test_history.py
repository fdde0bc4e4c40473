"""`invoke runs` and `invoke compare` by id over the committed H200 evidence; the runs index; the manifest's source."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reprokit.commands.records import compare_command, runs_command
from reprokit.errors import ConfigError, ExitCode
from reprokit.records.atomic import write_json_atomic
from reprokit.records.events import Ended, StepEnded
from reprokit.records.history import list_runs, resolve_run
from reprokit.records.models import RunStatus, StepEntry
from reprokit.records.provenance import ci_run_url, source_provenance
from reprokit.records.recorder import Recorder
from reprokit.records.run_dir import load_manifest
from reprokit.report.compare import compare_runs, environment, render_markdown
from reprokit.report.runs_index import render_index
from tests.conftest import REPO
from tests.unit.report.report_data import marks

EVIDENCE = REPO / "evidence"
EP8_H200 = "20261129T095816Z-ep8-crash-local-8aaa"
NO_GPU = "no NVIDIA driver on this host (libcuda.so.1 not found); install the driver, or run on a GPU host"


def test_runs_lists_the_committed_evidence():
    runs = list_runs(EVIDENCE)
    assert [(r.run_id, r.verdict, r.held, r.judged, r.kit, r.gpu, r.driver) for r in runs] == [
        ("20261129T084603Z-smem-probe-local-4ec2", "PASS", 4, 4, "smem-probe", "1 x NVIDIA H200", "580.159.04"),
        ("20261129T095640Z-tile-sweep-local-f9a8", "PASS", 2, 2, "tile-sweep", "1 x NVIDIA H200", "580.159.04"),
        (EP8_H200, "INCONCLUSIVE", 2, 8, "ep8-crash", "1 x NVIDIA H200", "580.159.04"),
        # evidence/h200-ssh: the same kits on the H200 over a real OpenSSH server (host h200)
        ("20261201T095658Z-smem-probe-h200-19d7", "PASS", 4, 4, "smem-probe", "1 x NVIDIA H200", "580.159.04"),
        ("20261201T095709Z-tile-sweep-h200-cedf", "PASS", 2, 2, "tile-sweep", "1 x NVIDIA H200", "580.159.04"),
        ("20261201T095836Z-ep8-crash-h200-7d7c", "INCONCLUSIVE", 2, 9, "ep8-crash", "1 x NVIDIA H200", "580.159.04"),
        # evidence/triton-cross-compile: the Triton kits compiled for SM120 and SM90 on a machine with no GPU
        ("20261201T102540Z-triton-mla-decode-local-3717", "PASS", 4, 4, "triton-mla-decode", "none", "-"),
        ("20261201T102552Z-triton-moe-configs-local-ce94", "PASS", 8, 8, "triton-moe-configs", "none", "-"),
        # evidence/h200-triton: the Triton kits with the H200's own Triton
        ("20261201T105928Z-triton-moe-configs-local-bef6", "PASS", 8, 8, "triton-moe-configs", "1 x NVIDIA H200", "580.159.04"),
        ("20261201T110003Z-triton-mla-decode-local-d283", "PASS", 4, 4, "triton-mla-decode", "1 x NVIDIA H200", "580.159.04"),
        # evidence/h200-ssh-renovated: the h200-ssh kits again, after the renovation of the hosts layer and records
        ("20261201T134353Z-smem-probe-h200-9747", "PASS", 4, 4, "smem-probe", "1 x NVIDIA H200", "580.159.04"),
        ("20261201T134402Z-tile-sweep-h200-f764", "PASS", 2, 2, "tile-sweep", "1 x NVIDIA H200", "580.159.04"),
        ("20261201T134523Z-ep8-crash-h200-f951", "INCONCLUSIVE", 2, 9, "ep8-crash", "1 x NVIDIA H200", "580.159.04"),
        # evidence/catalogue: the catalogue kits on the development VM, no GPU
        ("20261201T225636Z-b12x-moe-smem-local-7ba7", "PASS", 5, 5, "b12x-moe-smem", "none", "-"),
        ("20261201T234901Z-ep8-crash-vllm-local-ab3b", "INCONCLUSIVE", 0, 6, "ep8-crash-vllm", "none", "-"),
        ("20261201T234903Z-ep8-crash-vllm-fixed-local-746a", "INCONCLUSIVE", 0, 5, "ep8-crash-vllm-fixed", "none", "-"),
        # evidence/h200-ssh-vllm: the vLLM kits on the H200 over a real OpenSSH server (no vLLM, no model: serve inconclusive)
        ("20261203T070217Z-ep8-crash-vllm-h200-191a", "INCONCLUSIVE", 0, 6, "ep8-crash-vllm", "1 x NVIDIA H200", "580.159.04"),
        ("20261203T070223Z-ep8-crash-vllm-fixed-h200-a3e8", "INCONCLUSIVE", 0, 5, "ep8-crash-vllm-fixed", "1 x NVIDIA H200",
         "580.159.04"),
        ("20261203T082826Z-mxfp8-gemm-tiles-local-a629", "PASS", 6, 6, "mxfp8-gemm-tiles", "none", "-"),
        ("20261204T174708Z-triton-matmul-ogs-local-1b22", "PASS", 6, 6, "triton-matmul-ogs", "none", "-"),
        # evidence/catalogue: sglang's extend attention compiled for SM120; ep8-crash-fixed's GPU-less run (static step only)
        ("20261206T031354Z-triton-extend-attention-local-90e3", "PASS", 5, 5, "triton-extend-attention", "none", "-"),
        ("20261206T031428Z-ep8-crash-fixed-local-6a02", "INCONCLUSIVE", 1, 8, "ep8-crash-fixed", "none", "-"),
        # evidence/catalogue: four Triton kernels of vLLM and sglang wheels compiled for the 101376 B parts
        ("20261206T064834Z-triton-mla-decode-vllm-local-b032", "PASS", 5, 5, "triton-mla-decode-vllm", "none", "-"),
        ("20261206T064919Z-triton-batch-invariant-matmul-local-8d27", "PASS", 5, 5, "triton-batch-invariant-matmul", "none",
         "-"),
        ("20261206T064950Z-triton-unified-attention-fp32-local-01e9", "PASS", 5, 5, "triton-unified-attention-fp32", "none",
         "-"),
        ("20261206T065030Z-triton-lightning-attn-local-6938", "PASS", 5, 5, "triton-lightning-attn", "none", "-"),
        # evidence/catalogue: FlashQLA's TileLang prepare_h lowered for sm_121a
        ("20261206T073120Z-tilelang-prepare-h-local-4e56", "PASS", 5, 5, "tilelang-prepare-h", "none", "-"),
        # evidence/h200-ssh-layout: the h200-ssh kits again, after the hosts wing's second round (same exit codes)
        ("20261206T080039Z-smem-probe-h200-b1df", "PASS", 4, 4, "smem-probe", "1 x NVIDIA H200", "580.159.04"),
        ("20261206T080055Z-tile-sweep-h200-4882", "PASS", 2, 2, "tile-sweep", "1 x NVIDIA H200", "580.159.04"),
        ("20261206T080224Z-ep8-crash-h200-8a34", "INCONCLUSIVE", 2, 10, "ep8-crash", "1 x NVIDIA H200", "580.159.04"),
        ("20261206T080319Z-ep8-crash-fixed-h200-65df", "INCONCLUSIVE", 1, 8, "ep8-crash-fixed", "1 x NVIDIA H200",
         "580.159.04"),
        # evidence/catalogue: the real-engine kits against vLLM's CPU build on the development VM (host dev-vm)
        ("20261206T105556Z-vllm-cpu-moe-dev-vm-eb2e", "PASS", 9, 9, "vllm-cpu-moe", "none", "-"),
        ("20261206T105633Z-vllm-cpu-ep-crash-dev-vm-b1b4", "FAIL", 1, 4, "vllm-cpu-ep-crash", "none", "-"),
        ("20261206T105703Z-vllm-cpu-ep-crash-fixed-dev-vm-7647", "PASS", 5, 5, "vllm-cpu-ep-crash-fixed", "none", "-"),
    ]
    # the H200 ran the static prediction without FlashInfer or sglang installed: pins, not what ran
    assert runs[2].versions == ("torch 2.11.0, flashinfer-python 0.6.3 (pinned, not seen), sglang 0.5.9 (pinned, not seen), "
                                "triton 3.6.0")
    assert runs[2].git_commit == "-"  # written before the manifest recorded its commit


@pytest.mark.parametrize(("filters", "count"), [
    ({"kit": "ep8-crash"}, 4), ({"verdict": "pass"}, 23), ({"gpu": "h200"}, 17), ({"gpu": "sm120"}, 0),
    ({"host": "local"}, 19), ({"host": "dev-vm"}, 3), ({"host": "rtx-1"}, 0), ({"since": "2026-11-29T09:00"}, 33),
])
def test_runs_filters(filters, count):
    assert len(list_runs(EVIDENCE, **filters)) == count


def test_resolve_by_id_part_of_it_or_path():
    assert resolve_run(EP8_H200, [EVIDENCE]) == EVIDENCE / "h200" / EP8_H200
    assert resolve_run("8aaa", [EVIDENCE]) == EVIDENCE / "h200" / EP8_H200
    assert resolve_run(str(EVIDENCE / "h200" / EP8_H200), []) == EVIDENCE / "h200" / EP8_H200
    with pytest.raises(ConfigError, match=r"run '20261129T09' is ambiguous under .*evidence: 20261129T095640Z-tile-sweep-local"
                                          r"-f9a8, 20261129T095816Z-ep8-crash-local-8aaa; give more of the id") as err:
        resolve_run("20261129T09", [EVIDENCE])
    assert err.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(ConfigError, match=r"run 'nope': no such record under .*evidence; `invoke runs --runs-dir DIR` lists"):
        resolve_run("nope", [EVIDENCE])


def gpu_less_record(tmp_path: Path) -> Path:
    """The same kit on a machine without a GPU, as a run there records it."""
    h200 = json.loads((EVIDENCE / "h200" / EP8_H200 / "manifest.json").read_text())
    record = Recorder.create(tmp_path / "runs", "20261201T090000Z-ep8-crash-local-0000", kit=h200["kit"], pins=h200["pins"],
                             host=h200["host"], images=h200["images"],
                             fingerprint={"devices": [], "gpu_reason": NO_GPU, "nvcc": "13.0", "packages": {}}, verdict=None)
    write_json_atomic(record.dir / "verdict.json", {"verdict": "INCONCLUSIVE", "summary": "", "expectations": []})
    record.record(Ended(RunStatus.COMPLETE))
    return record.dir


def test_compare_by_id_shows_the_environment_of_an_h200_and_a_gpu_less_run(tmp_path, capsys):
    gpu_less = gpu_less_record(tmp_path)
    diff = compare_runs(EVIDENCE / "h200" / EP8_H200, gpu_less)
    assert diff["environment"]["GPUs"] == {"a": "1 x NVIDIA H200 (sm90)", "b": f"none ({NO_GPU})"}
    assert diff["environment"]["driver"] == {"a": "580.159.04", "b": None}
    assert diff["environment"]["opt-in smem/block (B)"] == {"a": "232448", "b": None}
    assert diff["regressions"] == []  # nothing held that now fails: the GPU-less run judged nothing
    text = render_markdown(diff)
    assert "| GPUs | 1 x NVIDIA H200 (sm90) | none (no NVIDIA driver" in text
    assert compare_command(EP8_H200, gpu_less.name, [str(EVIDENCE), str(tmp_path / "runs")]) == ExitCode.PASS
    assert capsys.readouterr().out.startswith(f"# Compare: {EP8_H200} (A) vs 20261201T090000Z-ep8-crash-local-0000 (B)\n")


def test_the_same_record_twice_has_no_difference():
    run = EVIDENCE / "h200" / EP8_H200
    diff = compare_runs(run, run)
    assert (diff["environment"], diff["pins"], diff["expectations"], diff["regressions"]) == ({}, {}, [], [])
    assert environment(load_manifest(run))["image serve"] == "native runtime: no image ran"


def perf_record(runs: Path, run_id: str, throughput: tuple[float, float]) -> Path:
    record = Recorder.create(runs, run_id, kit={"name": "ep8-crash"}, pins={}, host={"name": "rtx-1"}, fingerprint={},
                             verdict=None)
    result = {"status": "ok", "ready_after_s": 100.0,
              "performance": {"ready_after_s": 100.0, "by_concurrency": {
                  f"c{c}": {"concurrency": c, "output_throughput_tok_s": t, "median_ttft_ms": 50.0} for c, t in zip((8, 32), throughput)}}}
    write_json_atomic(record.step_dir("serve") / "result.json", result)
    record.record(StepEnded(StepEntry("serve", "serve", "ok", result_file="steps/serve/result.json")))
    write_json_atomic(record.dir / "verdict.json", {"verdict": "PASS", "summary": "", "expectations": []})
    record.record(Ended(RunStatus.COMPLETE))
    return record.dir


def test_serve_throughput_regression_beyond_the_tolerance(tmp_path, capsys):
    a = perf_record(tmp_path, "run-a", (1580.0, 1640.0))
    b = perf_record(tmp_path, "run-b", (1560.0, 1400.0))  # c8 -1.3% (within 5%), c32 -14.6%
    diff = compare_runs(a, b, tolerance=0.05)
    assert diff["regressions"] == ["serve c32 output tok/s: 1640 -> 1400 (x0.85)"]
    assert compare_runs(a, b, tolerance=0.2)["regressions"] == []
    assert compare_command("run-a", "run-b", [str(tmp_path)], fail_on_regression=True) == ExitCode.FAIL
    assert "| 32 | output tok/s | 1640 | 1400 | 0.854 | REGRESSION |" in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r"--tolerance-pct 150: give a percentage from 0 to 100"):
        compare_command("run-a", "run-b", [str(tmp_path)], tolerance_pct=150)


def test_index_has_one_trend_per_kit_and_host_and_links_each_report(tmp_path, capsys):
    out = tmp_path / "site" / "index.html"
    assert runs_command(str(EVIDENCE), html=str(out)) == ExitCode.PASS
    assert capsys.readouterr().out.rstrip().endswith(f"index: {out}")
    page = out.read_text()
    for kit in ("smem-probe", "tile-sweep", "ep8-crash"):
        assert len(marks(page, f"trend-{kit}-local", "circle", "point")) == 1
    assert [m["data-verdict"] for m in marks(page, "trend-ep8-crash-local", "circle", "point")] == ["INCONCLUSIVE"]
    for kit in ("smem-probe", "tile-sweep", "ep8-crash"):  # over SSH before and after the renovation, and after #38
        assert len(marks(page, f"trend-{kit}-h200", "circle", "point")) == 3
    assert page.count('<a href="../../../') == 33  # the records that have a report.html, linked relatively
    assert "<script" not in page and "http" not in page.split("<body>", 1)[1]


def test_index_renders_from_the_records_alone():
    page = render_index(EVIDENCE, list_runs(EVIDENCE))
    assert page.count("<tr><td") == 34
    assert '<a href="h200/20261129T095816Z-ep8-crash-local-8aaa/report.html">' in page


def test_manifest_records_the_commit_and_the_ci_run(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/reprokit")
    monkeypatch.setenv("GITHUB_RUN_ID", "123456")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    monkeypatch.chdir(REPO)
    record = Recorder.create(tmp_path, "run-x", kit={"name": "ep8-crash", "path": "kits/ep8-crash.yml"})
    source = json.loads((record.dir / "manifest.json").read_text())["source"]
    assert source["git_commit"] == head and len(head) == 40
    assert source["ci_run_url"] == "https://github.com/acme/reprokit/actions/runs/123456/attempts/2"
    assert len(source["kit_git_commit"]) == 40


def test_outside_a_checkout_there_is_no_commit_and_no_error(tmp_path):
    assert source_provenance(cwd=tmp_path) == {"git_commit": None, "git_dirty": None, "kit_git_commit": None,
                                               "ci_run_url": ci_run_url()}
    assert ci_run_url({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "a/b", "GITHUB_RUN_ID": "7",
                       "GITHUB_RUN_ATTEMPT": "1"}) == "https://github.com/a/b/actions/runs/7"
