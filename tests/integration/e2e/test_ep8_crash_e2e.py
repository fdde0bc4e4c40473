"""`invoke repro ep8-crash --host <test host>` end to end: real SSH, real Docker, real workloads, the real triage,
judgement and report; only the sglang server (and nvidia-smi) is a test double (tests/doubles/sglang-server)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run import load_manifest, verify_record
from tests.conftest import REPO
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_docker import BASE, containers_of
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

pytestmark = pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")
DOUBLE = "reprokit-test/sglang-double:1"


@pytest.fixture(scope="module")
def serve_double(tmp_path_factory):
    ctx = tmp_path_factory.mktemp("double")
    shutil.copytree(REPO / "tests" / "doubles" / "sglang-server", ctx, dirs_exist_ok=True)
    shutil.copy(REPO / "tests" / "fixtures" / "logs" / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz", ctx / "server-log.gz")
    subprocess.run(["docker", "build", "-q", "--build-arg", f"BASE_IMAGE={BASE}", "-t", DOUBLE, str(ctx)],
                   check=True, capture_output=True)
    return DOUBLE


def run_e2e(tmp_path: Path, serve_image: str, kits_dir: Path | None = None):
    work = host_workdir("h1", "e2e")
    inventory = write_inventory(tmp_path / "inv.yml", {"h1": {"workdir": work, "runtime": "docker",
                                                              "container_ulimits": "{}"}})
    known = known_hosts_for(tmp_path / "known_hosts", "h1")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                        "--image", f"serve={serve_image}", "--json", "--quiet", kit="ep8-crash")
    return proc, work


def test_ep8_crash_against_the_serve_double(tmp_path, serve_double):
    proc, work = run_e2e(tmp_path, serve_double)
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir)
    assert manifest["status"] == "complete", manifest.get("status_detail")
    steps = {s["name"]: s for s in manifest["steps"]}
    assert steps["serve"]["status"] == "ok", steps["serve"]
    serve = json.loads((run_dir / "steps" / "serve" / "result.json").read_text())
    assert serve["ready"] is True and serve["outcome"] == "ready"
    assert serve["command"][1:4] == ["-m", "sglang.launch_server", "--model-path"]
    assert {"--tp-size", "--ep-size", "--moe-runner-backend", "--quantization"} <= set(serve["command"])
    assert serve["smoke"]["ok"] is True and serve["smoke"]["http_status"] == 200
    assert [row["concurrency"] for row in serve["bench"]] == [1, 8, 32]
    assert [row["completed"] for row in serve["bench"]] == [4, 32, 128]
    assert serve["telemetry"]["available"] is True
    assert [g["max_power_w"] for g in serve["telemetry"]["per_gpu"]] == [235.5] * 8
    # the pulled-back server log, triaged by the real parser
    triage = json.loads((run_dir / "steps" / "triage" / "result.json").read_text())
    assert "steps/serve/server.log" in triage["logs"]
    assert triage["verdict"] == "READY_WITH_NONFATAL_AUTOTUNE_FAILURES"
    assert triage["autotune_failure_tiles"] == ["128x256x128", "256x128x128"]
    assert sum(row["count"] for row in triage["autotune_failures"]) == 192
    # expectations: what the double can show holds; what needs an SM120 GPU is inconclusive, with the reason
    verdict = json.loads((run_dir / "verdict.json").read_text())
    status = {j["name"]: j["status"] for j in verdict["expectations"]}
    assert status["server-came-up"] == status["smoke-request-answered"] == status["autotuning-ran"] == "PASS"
    reasons = {j["name"]: j["reason"] for j in verdict["expectations"]}
    assert reasons["server-ready-despite-autotune-failures"].startswith("applies to sm120/sm121; this host has no GPU")
    assert verdict["verdict"] == "INCONCLUSIVE" and proc.returncode in (ExitCode.INCONCLUSIVE, ExitCode.STEP_ERROR)
    report = (run_dir / "report.md").read_text()
    assert report.startswith("# ep8-crash on h1: INCONCLUSIVE")
    assert verify_record(run_dir) == []
    assert containers_of(manifest["run_id"]) == []
    assert list((work / "runs").iterdir()) == []


def test_a_kit_judging_the_double_as_if_on_sm120_passes_the_triage_expectations(tmp_path, serve_double):
    """The same run judged without the architecture gate: the triage expectations themselves hold on the double's log."""
    from reprokit.config.kit import load_kit_file
    from reprokit.judge import judge

    proc, _ = run_e2e(tmp_path, serve_double)
    (run_dir,) = runs_in(tmp_path / "runs")
    kit = load_kit_file(REPO / "kits" / "ep8-crash.yml")
    ungated = kit.model_copy(update={"expect": [e.model_copy(update={"when": None}) for e in kit.expect
                                                if e.step in ("serve", "triage")]})
    steps = {s["name"]: {**s, "result": json.loads((run_dir / s["result_file"]).read_text()) if s.get("result_file") else None}
             for s in load_manifest(run_dir)["steps"]}
    verdict = judge(ungated, steps, load_manifest(run_dir)["fingerprint"])
    assert {j["name"]: j["status"] for j in verdict["expectations"]} == {
        "server-came-up": "PASS", "smoke-request-answered": "PASS", "autotuning-ran": "PASS",
        "server-ready-despite-autotune-failures": "PASS", "failures-are-the-big-tiles": "PASS"}
