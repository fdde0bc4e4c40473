"""`vllm-cpu-moe` in a container on the Docker test host, ending PASS: the vLLM CPU image
(docker/vllm-cpu.Dockerfile, built by tests/services/up.d/50-vllm.sh offline from the lock's wheels on the
debootstrapped base, pinned by its registry digest), run by reprokit's docker runtime over SSH."""

from __future__ import annotations

import pytest

from reprokit.records.run_dir import load_manifest
from tests.conftest import run_invoke
from tests.integration.engine.conftest import ENGINE, MODELS_DIR, REASON, result
from tests.integration.engine.test_vllm_cpu_placements import assert_passed
from tests.integration.remote import conftest as remote
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON

IMAGE = ENGINE.get("VLLM_TEST_IMAGE", "")
IMAGE_REASON = ENGINE.get("VLLM_TEST_IMAGE_UNAVAILABLE") or DOCKER_REASON
pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or ""),
              pytest.mark.skipif(bool(IMAGE_REASON), reason=f"vLLM CPU image: {IMAGE_REASON}")]


def test_vllm_cpu_moe_passes_in_a_container(tmp_path, one_server):
    work = remote.host_workdir("h2", "vllm-cpu-docker")
    inventory = remote.write_inventory(tmp_path / "inv.yml", {"h2": {
        "workdir": work, "runtime": "docker", "container_ulimits": "{}", "models_dir": MODELS_DIR}})
    proc = run_invoke("repro", "vllm-cpu-moe", "--inventory", str(inventory), "--known-hosts",
                      str(remote.known_hosts_for(tmp_path / "known_hosts", "h2")), "--host", "h2", "--image",
                      f"vllm-cpu={IMAGE}", "--runs-dir", str(tmp_path / "runs"), "--json", "--quiet", "--set",
                      "serve.port=18461", timeout=600)
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert_passed(proc, run_dir)
    manifest = load_manifest(run_dir).to_json()
    assert (manifest["host"]["runtime"], manifest["images"]["vllm-cpu"]["ref"]) == ("docker", IMAGE)
    assert result(run_dir, "serve")["command"][0] == "/opt/venv/bin/vllm"  # the image's, found on its PATH
