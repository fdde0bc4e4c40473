"""`invoke repro ep8-crash-vllm` and `ep8-crash-vllm-fixed` end to end on a test host over real SSH: the real
serve-vllm workload, pull-back, triage, judgement and report; only the `vllm` command (and nvidia-smi's absence)
is a test double (tests/doubles/vllm-server), whose `vllm serve` and `vllm bench serve` options and known
VLLM_* variables are vLLM 0.27.0's own, read from its wheel by reprokit/upstream/vllm_args.py.

The host runs natively (the test inventory's runtime), so the double is handed to the step as its `vllm`
parameter (`--set serve.vllm=...`): a real host has the pinned vLLM on its PATH.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reprokit.errors import ExitCode, HostError
from reprokit.records.run_dir import verify_record
from tests.conftest import REPO
from tests.doubles.option_tables import write_vllm_tables
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

GLM5_CONFIG = {"architectures": ["GlmMoeDsaForCausalLM"], "hidden_size": 6144, "num_hidden_layers": 78}
VLLM_LOG = REPO / "tests" / "fixtures" / "logs" / "vllm-dp8-ep8-0.6.8-ready-autotune-failures.log"


def host_with_double(tmp_path: Path, tag: str) -> tuple[Path, Path, Path, Path]:
    """A host workdir with the model directory and the vLLM double (its option tables next to it)."""
    work = host_workdir("h1", tag)
    (work / "models" / "GLM-5-NVFP4").mkdir(parents=True)
    (work / "models" / "GLM-5-NVFP4" / "config.json").write_text(json.dumps(GLM5_CONFIG))
    double = work / "double"
    double.mkdir()
    shutil.copy(REPO / "tests" / "doubles" / "vllm-server" / "vllm", double / "vllm")
    shutil.copy(VLLM_LOG, double / "server.log")
    try:
        write_vllm_tables("0.27.0", double / "options.json")
    except HostError as exc:
        pytest.skip(f"vLLM 0.27.0's option tables: {exc}")
    subprocess.run(["chown", "-R", "rkuser:rkuser", str(work)], check=True)
    inventory = write_inventory(tmp_path / "inv.yml", {"h1": {
        "workdir": work, "gpu_arch": "sm120", "models_dir": work / "models", "cache_dir": work / "cache"}})
    return work, double / "vllm", inventory, known_hosts_for(tmp_path / "known_hosts", "h1")


def run_kit(tmp_path: Path, kit: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path, Path]:
    work, vllm, inventory, known = host_with_double(tmp_path, kit)
    settings = ["--set", f"serve.vllm={vllm}", "--set", "serve.port=18431", "--set", "serve.ready_timeout_s=120",
                "--set", "serve.bench={concurrencies: [1, 2], num_prompts_per_concurrency: 2, input_len: 16, output_len: 8}"]
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h1", "--json", "--quiet", *settings, *extra, kit=kit)
    (run_dir,) = runs_in(tmp_path / "runs")
    return proc, run_dir, work


def result(run_dir: Path, step: str) -> dict:
    return json.loads((run_dir / "steps" / step / "result.json").read_text())


def test_ep8_crash_vllm_against_the_vllm_double(tmp_path):
    proc, run_dir, work = run_kit(tmp_path, "ep8-crash-vllm")
    assert proc.returncode == ExitCode.PASS, proc.stdout + proc.stderr  # the host's GPU: the libcuda double's sm120
    serve = result(run_dir, "serve")
    model = f"{work}/models/GLM-5-NVFP4"
    assert serve["command"][1:3] == ["serve", model]
    assert serve["command"][3:] == ["--tensor-parallel-size", "8", "--moe-backend", "flashinfer_cutlass",
                                    "--gpu-memory-utilization", "0.9", "--max-num-seqs", "512", "--host", "127.0.0.1",
                                    "--port", "18431", "--enable-expert-parallel"]
    assert (serve["ready"], serve["outcome"], serve["smoke"]["ok"], serve["answers"]["ok"]) == (True, "ready", True, True)
    assert [(row["concurrency"], row["exit_code"], row["completed"]) for row in serve["bench"]] == [(1, 0, 2), (2, 0, 4)]
    assert sorted(p.name for p in (run_dir / "steps" / "serve").glob("bench-c*.json")) == ["bench-c1.json", "bench-c2.json"]
    triage = result(run_dir, "triage")
    assert triage["verdict"] == "READY_WITH_NONFATAL_AUTOTUNE_FAILURES"
    assert "128x256x128" in triage["autotune_failure_tiles"]
    status = {e["name"]: e["status"] for e in json.loads((run_dir / "verdict.json").read_text())["expectations"]}
    assert status == {"sm120-optin-limit": "PASS", "server-came-up": "PASS", "smoke-request-answered": "PASS",
                      "autotuning-ran": "PASS", "server-ready-despite-autotune-failures": "PASS",
                      "failures-are-the-big-tiles": "PASS"}
    assert verify_record(run_dir) == []


def test_ep8_crash_vllm_fixed_skips_the_moe_ops(tmp_path):
    proc, run_dir, _ = run_kit(tmp_path, "ep8-crash-vllm-fixed")
    assert proc.returncode == ExitCode.PASS, proc.stdout + proc.stderr
    assert result(run_dir, "serve")["env"] == ["FLASHINFER_LOGGING_LEVEL", "VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS"]
    triage = result(run_dir, "triage")
    assert (triage["verdict"], triage["autotune_failure_tiles"]) == ("READY", [])
    status = {e["name"]: e["status"] for e in json.loads((run_dir / "verdict.json").read_text())["expectations"]}
    assert status == dict.fromkeys(("sm120-optin-limit", "server-came-up", "answers-correct", "no-autotune-failures",
                                    "no-failing-tiles"), "PASS")


def test_a_flag_the_pinned_vllm_lacks_stops_the_server(tmp_path):
    """The double refuses what vLLM 0.27.0's parser refuses: the server exits 2 before it is ever ready."""
    proc, run_dir, _ = run_kit(tmp_path, "ep8-crash-vllm", "--set", "serve.extra_args=[--disable-flashinfer-autotune]")
    serve = result(run_dir, "serve")
    assert (serve["outcome"], serve["ready"], serve["server_exit_code"]) == ("exited", False, 2)
    assert "vllm serve: error: unrecognized arguments: --disable-flashinfer-autotune" in (
        run_dir / "steps" / "serve" / "server.log").read_text()
    assert proc.returncode == ExitCode.FAIL
