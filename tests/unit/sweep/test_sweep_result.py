"""The workload's contract on a machine without a GPU, the result schema, the roofline arithmetic,
the best-tile summary and the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from reprokit.workloads.tile_sweep import result as schema
from reprokit.workloads.tile_sweep import roofline, summary, table
from reprokit.workloads.tile_sweep.shapes import derive_problems

COPY_GBPS, PEAK_TFLOPS = 4000.0, 800.0


@pytest.fixture
def glm5(repo) -> dict:
    return yaml.safe_load((repo / "kits" / "models" / "glm-5.yml").read_text())


def run_sweep(repo, tmp_path, params: dict) -> tuple[int, dict, str]:
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the same outcome on a GPU host: these tests are about no GPU
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.tile_sweep", "--params", str(params_path),
                           "--out-dir", str(out)], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    result = json.loads((out / "result.json").read_text())
    return proc.returncode, result, (out / "table.txt").read_text() if (out / "table.txt").exists() else ""


def test_without_a_gpu_the_sweep_says_so_and_still_writes_the_whole_result(repo, tmp_path, glm5):
    code, result, text = run_sweep(repo, tmp_path, {
        "model": "glm-5", "model_config": glm5, "parallelism": ["tp8", "ep8"], "backends": ["boundary", "flashinfer"]})
    assert code == 4  # contract.Exit.NO_DEVICE
    assert result["status"] == "no_device"
    assert schema.validate(result) == []
    assert [p["id"] for p in result["problems"]][:2] == ["tp8-gemm1-t1", "tp8-gemm1-t2"]
    assert len(result["problems"]) == 40
    assert {p["id"]: (p["experts"], p["n"], p["k"]) for p in result["problems"]}["ep8-gemm2-t64"] == (32, 6144, 2048)
    assert {name: s["status"] for name, s in result["backends"].items()} == {"boundary": "skipped", "flashinfer": "skipped"}
    assert all(s["reason"] for s in result["backends"].values())
    assert result["cross_check"]["disagreements"] == []
    assert "no device" in text


@pytest.mark.parametrize("params, message", [
    ({}, "model_config is missing"),
    ({"model_config": {"hidden_size": 1}}, "lacks moe_intermediate_size"),
    ({"model_config": {}, "backends": ["cutlass"]}, "unknown backends"),
    ({"model_config": {}, "speed": 1}, "unknown parameters speed"),
    ({"model_config": {}, "predicted": "/nonexistent/static.json"}, "no such file"),
])
def test_bad_params_exit_2_with_a_message(repo, tmp_path, glm5, params, message):
    if params.get("model_config") == {}:
        params = {**params, "model_config": glm5}
    code, result, _ = run_sweep(repo, tmp_path, params)
    assert code == 2
    assert result["status"] == "bad_params"
    assert message in result["error"]


def test_score_memory_and_compute_bound():
    # 1 GB in 0.5 ms at 4000 GB/s copy: the memory bound is 0.25 ms, so half the roofline.
    scored = roofline.score(flops=1e9, bytes_moved=1e9, time_s=0.5e-3, peak_tflops=PEAK_TFLOPS, copy_gbps=COPY_GBPS)
    assert scored["bound"] == "memory"
    assert scored["gbps"] == pytest.approx(2000.0)
    assert scored["fraction_of_roofline"] == pytest.approx(0.5)
    assert scored["fraction_of_copy_bandwidth"] == pytest.approx(0.5)
    scored = roofline.score(flops=8e12, bytes_moved=1e9, time_s=20e-3, peak_tflops=PEAK_TFLOPS, copy_gbps=COPY_GBPS)
    assert scored["bound"] == "compute"
    assert scored["tflops"] == pytest.approx(400.0)
    assert scored["fraction_of_roofline"] == pytest.approx(0.5)


def test_reps_stay_within_bounds():
    assert roofline.reps_for(1e-3) == 20
    assert roofline.reps_for(20e-3) == 5
    assert roofline.reps_for(5e-3) == 10


def measured(problem, config, time_s):
    return {"backend": "triton", "config": config, "problem": problem.id, "outcome": "ok", "rel_error": 1e-3,
            "correct": True, "ctas": 2048, "time_median_s": time_s,
            **roofline.score(problem.flops, problem.min_bytes(), time_s, PEAK_TFLOPS, COPY_GBPS)}


def test_best_tile_headline_and_decode_notes(glm5):
    problems = derive_problems(glm5, ["ep8"], [1, 2048])
    ep8_t1 = problems[0]
    ideal = ep8_t1.min_bytes() / (COPY_GBPS * 1e9)
    rows = [
        measured(ep8_t1, "m16n64k128s4w4", ideal / 0.90),
        measured(ep8_t1, "m64n64k128s4w4", ideal / 0.60),
        {"backend": "triton", "config": "m128n128k128s4w8", "problem": ep8_t1.id, "outcome": "failed",
         "error": {"class": "out_of_resources"}},
    ]
    gemm2_t1 = problems[2]
    rows.append(measured(gemm2_t1, "m16n64k128s4w4", gemm2_t1.min_bytes() / (COPY_GBPS * 1e9) / 0.70))
    best = summary.best_per_problem(problems, rows)
    assert best[0]["config"] == "m16n64k128s4w4"
    assert best[0]["fraction_of_copy_bandwidth"] == pytest.approx(0.90)
    assert best[1] == {"problem": "ep8-gemm1-t2048", "config": None, "reason": "no configuration ran correctly"}
    ceilings = {"copy_gbps": COPY_GBPS, "read_gbps": 4400.0, "dense_gemm_tflops": PEAK_TFLOPS}
    head = summary.headline(problems, best, ceilings, {"cross_arch": {}, "disagreements": []}, [], "sm90")
    assert head["decode_ep_worst_best_tile"]["problem"] == "ep8-gemm2-t1"
    assert head["decode_ep_meets_target"] is False
    notes = summary.decode_notes(problems, best, ceilings, launch_overhead_s=4e-6, sm_count=132)
    assert len(notes) == 1 and notes[0].startswith("ep8-gemm2-t1 best m16n64k128s4w4: 70% of copy bandwidth")
    assert "moves 805.8 MB (100% weights) in 287.8 us, 201.5 us at copy bandwidth, 86.3 us over" in notes[0]
    assert "an empty launch costs 4.0 us of that (1% of the time)" in notes[0]
    assert notes[0].endswith("2048 CTAs on 132 SMs (15.5 per SM)")


def test_table_marks_each_outcome(glm5):
    problems = derive_problems(glm5, ["ep8"], [1])
    rows = [measured(problems[0], "a", 1e-3),
            {"backend": "triton", "config": "b", "problem": problems[0].id, "outcome": "failed",
             "error": {"class": "out_of_resources"}},
            {"backend": "triton", "config": "a", "problem": problems[1].id, "outcome": "skipped", "skip_reason": "time"}]
    body = {
        "model": "glm-5", "device": {"name": "NVIDIA H200", "gpu_arch": "sm90", "smem_optin_bytes": 232448},
        "roofline": {"copy_gbps": COPY_GBPS, "read_gbps": 4400.0, "dense_gemm_tflops": PEAK_TFLOPS},
        "configs": [{"id": "a", "compiled": {}}, {"id": "b", "compiled": {}}],
        "problems": [p.as_dict() for p in problems], "rows": rows,
        "best": summary.best_per_problem(problems, rows),
        "cross_check": {"checked": 2, "agreements": 1, "unverified": [], "cross_arch": {}, "disagreements": [
            {"subject": "triton:b", "check": "fits", "predicted": True, "observed": False, "basis": "x"}]},
    }
    text = table.render(body)
    assert "copy 4000 GB/s" in text
    line = next(row for row in text.splitlines() if row.startswith("ep8-gemm1-t1 "))
    assert line.split()[1:] == ["0.40", "OOR"]  # 1.61 GB of weights in 1 ms at 4000 GB/s
    assert "skip" in next(row for row in text.splitlines() if row.startswith("ep8-gemm2-t1 "))
    assert "DISAGREE triton:b fits: predicted True, observed False" in text
