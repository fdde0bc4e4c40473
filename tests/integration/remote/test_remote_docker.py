"""Workloads in containers on a remote host: the Docker CLI over the same SSH connection, containers always removed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import REPO
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

DOCKER_UNAVAILABLE = REPO / ".cache" / "services" / "docker.unavailable"
BASE = "reprokit-test/bookworm:base"  # debootstrapped by tests/services/up.d/20-docker.sh


def docker_reason() -> str | None:
    if DOCKER_UNAVAILABLE.exists():
        return f"Docker engine unavailable: {DOCKER_UNAVAILABLE.read_text().strip()}"
    probe = subprocess.run(["docker", "image", "inspect", BASE], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"the test base image {BASE} is missing; run tests/services/up (./dev test does)"
    return None


REASON = docker_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

# A test double for the image's python3: it hangs for the probe, and is the real python3 otherwise.
HANGING_IMAGE = "reprokit-test/hanging-python:1"
HANGING_DOCKERFILE = f"""FROM {BASE}
RUN printf '#!/bin/sh\\ncase "$*" in *smem_probe*) echo "probe started"; exec sleep 300;; esac\\nexec /usr/bin/python3 "$@"\\n' \\
      > /usr/local/bin/python3 && chmod 755 /usr/local/bin/python3
"""


def containers_of(run_id: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-a", "--filter", f"label=reprokit.run={run_id}", "--format", "{{.Names}}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.fixture(scope="module")
def hanging_image(tmp_path_factory):
    ctx = tmp_path_factory.mktemp("hang-image")
    (ctx / "Dockerfile").write_text(HANGING_DOCKERFILE)
    subprocess.run(["docker", "build", "-q", "-t", HANGING_IMAGE, str(ctx)], check=True, capture_output=True)
    return HANGING_IMAGE


def docker_host(tmp_path: Path, name: str, tag: str) -> tuple[Path, Path, Path]:
    work = host_workdir(name, tag)
    # this sandbox may not raise memlock; real GPU hosts keep the default (memlock unlimited)
    inventory = write_inventory(tmp_path / "inv.yml", {name: {"workdir": work, "runtime": "docker", "container_ulimits": "{}"}})
    known = known_hosts_for(tmp_path / "known_hosts", name)
    return work, inventory, known


def test_probe_in_a_container_over_ssh(tmp_path):
    work, inventory, known = docker_host(tmp_path, "h2", "docker")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h2", "--image", f"workload={BASE}", "--json", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr  # no torch in the image: torch-and-driver-agree cannot say
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir).to_json()
    assert manifest["host"]["runtime"] == "docker"
    assert manifest["images"]["workload"]["ref"] == BASE
    # the fingerprint and the probe ran in the image: Debian's python, in a container
    assert manifest["fingerprint"]["host"]["in_container"] is True
    assert manifest["fingerprint"]["python_executable"] == "/usr/bin/python3"
    # `--gpus all`, as on any GPU host: dockerd's GPU hook (a double here) put the host's libcuda into the container
    assert [d["name"] for d in manifest["fingerprint"]["devices"]] == ["NVIDIA RTX PRO 6000 Blackwell (reprokit test double)"]
    probe = json.loads((run_dir / "steps" / "probe" / "result.json").read_text())
    assert (probe["status"], probe["devices"][0]["launch_past_optin_limit"]["error_name"]) == (
        "ok", "CUDA_ERROR_INVALID_VALUE")
    assert containers_of(manifest["run_id"]) == []
    assert verify_record(run_dir) == []
    assert list((work / "runs").iterdir()) == []


def test_missing_image_reference_is_a_clear_error_before_anything_runs(tmp_path):
    _, inventory, known = docker_host(tmp_path, "h3", "docker-noimage")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h3", "--quiet")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr == (
        "error: host 'h3' runs workloads in docker, and kit smem-probe's image 'workload' (step probe) has no reference"
        " for it: build it (`invoke build --kit smem-probe --host h3`) or pass --image workload=REF\n")
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []  # no record: nothing ran


def test_timeout_removes_the_container(tmp_path, hanging_image):
    work, inventory, known = docker_host(tmp_path, "h4", "docker-timeout")
    kits = tmp_path / "kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text().replace("timeout_s: 180", "timeout_s: 3"))
    from reprokit.config.kit import load_kit_file
    from reprokit.hosts.axes import load_inventory
    from reprokit.hosts.factory import ConnectOptions
    from reprokit.run.kit_run import run_kit

    inv = load_inventory(inventory)
    outcome = run_kit(load_kit_file(kits / "smem-probe.yml"), kits / "smem-probe.yml", inv.host("h4"), tmp_path / "runs",
                      kits, say=lambda m: None, inventory=inv,
                      options=ConnectOptions(known_hosts=known, images={"workload": hanging_image}))
    manifest = load_manifest(outcome.run_dir).to_json()
    probe = next(s for s in manifest["steps"] if s["name"] == "probe")
    assert probe["status"] == "timeout"
    assert (outcome.run_dir / "steps" / "probe" / "step.log").read_text().startswith("probe started\n")
    assert containers_of(manifest["run_id"]) == []


def test_ctrl_c_removes_the_container(tmp_path, hanging_image):
    work, inventory, known = docker_host(tmp_path, "h5", "docker-ctrlc")
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host", "h5",
         "--inventory", str(inventory), "--known-hosts", str(known), "--runs-dir", str(tmp_path / "runs"),
         "--image", f"workload={hanging_image}"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    run_id = None
    while time.monotonic() < deadline:
        names = subprocess.run(["docker", "ps", "--filter", "name=-probe$", "--format", "{{.Names}}"],
                               capture_output=True, text=True).stdout.split()
        mine = [n for n in names if "-smem-probe-h5-" in n]
        if mine:
            run_id = mine[0].removesuffix("-probe")
            break
        time.sleep(0.2)
    assert run_id, "the probe container never started"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert containers_of(run_id) == []
    assert load_manifest(tmp_path / "runs" / run_id).to_json()["status"] == "interrupted"


def test_an_image_missing_on_the_host_stops_before_anything_is_written(tmp_path):
    _, inventory, known = docker_host(tmp_path, "h6", "docker-missing")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h6", "--image", "workload=reprokit-test/not-built:0")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.strip() == ("error: host 'h6': image 'workload' (reprokit-test/not-built:0) is not on the host; build it"
                                   " with `invoke build --host h6` (or pass --image workload=REF of one that is)")
    assert runs_in(tmp_path / "runs") == []


def test_the_engine_gives_the_gpu_double_only_to_a_container_that_asks_for_a_gpu():
    """dockerd's GPU hook (tests/doubles/nvidia-container-toolkit) as the real toolkit's: --gpus, or nothing."""
    probe = ["python3", "-c", "import ctypes; ctypes.CDLL('libcuda.so.1'); print('loaded')"]
    asked = subprocess.run(["docker", "run", "--rm", "--network", "none", "--gpus", "all", BASE, *probe],
                           capture_output=True, text=True, timeout=120)
    assert (asked.returncode, asked.stdout) == (0, "loaded\n"), asked.stderr
    not_asked = subprocess.run(["docker", "run", "--rm", "--network", "none", BASE, *probe], capture_output=True,
                               text=True, timeout=120)
    assert not_asked.returncode == 1
    assert not_asked.stderr.strip().endswith("OSError: libcuda.so.1: cannot open shared object file: No such file or directory")
