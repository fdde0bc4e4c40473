"""This machine with `runtime: docker`: its steps run in containers as an SSH host's do (one launcher, one runtime)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import REPO
from tests.integration.remote.test_remote_docker import BASE, REASON, containers_of

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def test_a_local_host_runs_its_steps_in_docker(tmp_path):
    inventory = tmp_path / "inventory.yml"
    # this sandbox may not raise memlock; real GPU hosts keep the default (memlock unlimited)
    inventory.write_text("all:\n  hosts:\n    box:\n      ansible_connection: local\n      runtime: docker\n"
                         "      container_ulimits: {}\n")
    runs = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host", "box",
         "--inventory", str(inventory), "--runs-dir", str(runs), "--image", f"workload={BASE}", "--json", "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr  # no torch in the image: torch-and-driver-agree cannot say
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = load_manifest(run_dir).to_json()
    assert (manifest["host"]["connection"], manifest["host"]["runtime"]) == ("local", "docker")
    assert manifest["images"]["workload"]["ref"] == BASE
    # the fingerprint and the probe ran in the image (Debian's python), not in this machine's virtualenv
    assert manifest["fingerprint"]["host"]["in_container"] is True
    assert manifest["fingerprint"]["python_executable"] == "/usr/bin/python3"
    probe = json.loads((run_dir / "steps" / "probe" / "result.json").read_text())
    assert probe["status"] == "ok"
    assert containers_of(manifest["run_id"]) == []
    assert verify_record(run_dir) == []
    assert list((runs / ".hosts" / "box" / "runs").iterdir()) == []  # every step came back; the host's copy went


def test_the_dry_run_refuses_what_the_run_refuses_with_its_exit_code(tmp_path):
    """--dry is the run's own preparation and planner: a docker host without the step's image reference stops both."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  hosts:\n    box:\n      ansible_connection: local\n      runtime: docker\n"
                         "      container_ulimits: {}\n")
    args = ["repro", "smem-probe", "--host", "box", "--inventory", str(inventory), "--quiet"]
    dry = subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "--dry", *args, "--runs-dir",
                          str(tmp_path / "dry")], cwd=REPO, capture_output=True, text=True, timeout=120)
    run = subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), *args, "--runs-dir",
                          str(tmp_path / "run")], cwd=REPO, capture_output=True, text=True, timeout=300)
    line = ("error: host 'box' runs workloads in docker, and kit smem-probe's image 'workload' (step probe) has no"
            " reference for it: build it (`invoke build --kit smem-probe --host box`) or pass --image workload=REF")
    assert (dry.returncode, dry.stderr.strip().splitlines()[-1]) == (ExitCode.HOST_ERROR, line)
    assert (run.returncode, run.stderr.strip().splitlines()[-1]) == (ExitCode.HOST_ERROR, line)
    assert not (tmp_path / "dry").exists()  # the dry run wrote nothing
