"""`vllm-cpu-moe` in the other placements reprokit offers, each ending PASS with the real engine: an SSH test host
(native) and a Slurm job on the test cluster. The local host is `test_vllm_cpu_local.py`; the container is
`test_vllm_cpu_docker.py`. The hosts share this machine's file system, so they find the engine's cache where
tests/services/up.d/50-vllm.sh put it."""

from __future__ import annotations

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import run_invoke
from tests.integration.engine.conftest import MODELS_DIR, PASSING, REASON, result, serve_settings, statuses
from tests.integration.remote import conftest as remote
from tests.integration.slurm import conftest as slurm

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


def repro(tmp_path, inventory, known, host: str, port: int):
    proc = run_invoke("repro", "vllm-cpu-moe", "--inventory", str(inventory), "--known-hosts", str(known), "--host",
                      host, "--runs-dir", str(tmp_path / "runs"), "--json", "--quiet", *serve_settings(port), timeout=600)
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    return proc, run_dir


def assert_passed(proc, run_dir):
    assert proc.returncode == ExitCode.PASS, proc.stdout + proc.stderr
    assert statuses(run_dir) == PASSING
    triage = result(run_dir, "triage")
    assert (triage["verdict"], triage["decided_by"]["text"]) == ("READY", "INFO:     Application startup complete.")
    assert verify_record(run_dir) == []


@pytest.mark.skipif(remote.REASON is not None, reason=remote.REASON or "")
def test_vllm_cpu_moe_passes_on_an_ssh_host(tmp_path, one_server):
    work = remote.host_workdir("h1", "vllm-cpu")
    inventory = remote.write_inventory(tmp_path / "inv.yml", {"h1": {"workdir": work, "models_dir": MODELS_DIR}})
    proc, run_dir = repro(tmp_path, inventory, remote.known_hosts_for(tmp_path / "known_hosts", "h1"), "h1", 18451)
    assert_passed(proc, run_dir)
    assert result(run_dir, "serve")["command"][2] == f"{MODELS_DIR}/tiny-qwen3-moe"
    assert load_manifest(run_dir).host["name"] == "h1"


@pytest.mark.skipif(slurm.REASON is not None, reason=slurm.REASON or "")
def test_vllm_cpu_moe_passes_as_a_slurm_job(tmp_path, one_server):
    # c2: the fault tests of tests/integration/slurm set c1 DOWN under their own jobs, and a job beside them dies too
    inventory = slurm.inventory(tmp_path / "inv.yml", slurm.workdir("vllm-cpu"), models_dir=MODELS_DIR,
                                slurm_extra_args=["--exclude=c1"])
    proc, run_dir = repro(tmp_path, inventory, slurm.known_hosts(tmp_path / "known_hosts"), "cluster", 18452)
    assert_passed(proc, run_dir)
    serve = next(s for s in load_manifest(run_dir).steps if s.name == "serve")
    assert (serve.launch["state"], serve.launch["exit_code"]) == ("COMPLETED", 0)
    assert serve.launch["job_id"] and serve.launch["nodes"] == "c2"
