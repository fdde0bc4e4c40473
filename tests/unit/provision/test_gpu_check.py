"""The GPU check of ansible role gpu_verify (files/gpu_check.py): each known failure mode gives its diagnosis,
from the messages the real tools print. The host's files and commands are stand-ins."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "ansible/roles/gpu_verify/files/gpu_check.py"
_spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)

IMAGE = "nvidia/cuda:12.9.1-base-ubuntu24.04@sha256:" + "0" * 64
# /proc/driver/nvidia/version as on a real H200 host (driver 580.159.04, open kernel module).
VERSION = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n"
SMI_8 = "".join(f"GPU {i}: NVIDIA RTX PRO 6000 Blackwell Server Edition (UUID: GPU-{i:08d})\n" for i in range(8))


class FakeHost(gpu_check.Host):
    def __init__(self, files=None, gpus=8, nodes=8, ctl=True):
        self.files = {"/proc/driver/nvidia/version": VERSION, "/proc/modules": "nvidia_uvm 1 0\nnvidia 2 1\n"}
        self.files.update(files or {})
        self.files = {k: v for k, v in self.files.items() if v is not None}
        self.gpus, self.nodes, self.ctl = gpus, nodes, ctl

    def exists(self, path):
        return path in self.files or (path == "/dev/nvidiactl" and self.ctl)

    def read(self, path):
        return self.files[path]

    def glob(self, pattern):
        if pattern == "/proc/driver/nvidia/gpus/*":
            return [f"/proc/driver/nvidia/gpus/0000:{i:02x}:00.0" for i in range(self.gpus)]
        if pattern == "/dev/nvidia[0-9]*":
            return [f"/dev/nvidia{i}" for i in range(self.nodes)]
        return []


class FakeRun:
    def __init__(self, answers):
        self.answers = answers  # first word(s) of the command -> (code, output)
        self.calls = []

    def __call__(self, argv, timeout_s):
        self.calls.append(argv)
        for prefix, answer in self.answers.items():
            if " ".join(argv).startswith(prefix):
                return answer
        raise AssertionError(f"unexpected command {argv}")


HEALTHY = {
    "nvidia-smi -L": (0, SMI_8),
    "docker run --rm --gpus all": (0, SMI_8),
    "docker info": (0, "systemd\n"),
    "docker rm -f": (0, ""),
    "docker run -d": (0, "abc\n"),
    "systemctl daemon-reload": (0, ""),
    "docker exec": (0, SMI_8),
}


def check(answers=None, host=None, daemon_reload=True):
    run = FakeRun({**HEALTHY, **(answers or {})})
    host = host or FakeHost(files={"/run/systemd/system": ""})
    return gpu_check.check(run, host, IMAGE, daemon_reload), run


def test_a_healthy_host():
    result, run = check()
    assert result["ok"] and result["diagnosis"] is None
    assert (result["host_gpus"], result["container_gpus"], result["module_version"]) == (8, 8, "580.159.04")
    assert [c["name"] for c in result["checks"]] == [
        "kernel module", "device nodes", "nvidia-smi on the host", "nvidia-smi in a container",
        "GPUs kept across systemctl daemon-reload"]
    assert ["docker", "run", "--rm", "--gpus", "all", IMAGE, "nvidia-smi", "-L"] in run.calls
    assert run.calls[-1] == ["docker", "rm", "-f", "reprokit-gpu-check"]  # the probe container is removed


def test_module_not_loaded():
    result, _ = check(host=FakeHost(files={"/proc/driver/nvidia/version": None, "/proc/modules": "ext4 1 0\n"}))
    assert result["diagnosis"] == "the nvidia kernel module is not loaded"
    assert "dkms status" in result["fix"] and "Secure Boot" in result["fix"]


def test_missing_device_nodes():
    result, _ = check(host=FakeHost(nodes=6))
    assert result["diagnosis"].startswith("missing NVIDIA device nodes (/dev/nvidiactl present, 6 of 8 /dev/nvidiaN)")
    assert "nvidia-ctk system create-device-nodes" in result["fix"]
    result, _ = check(host=FakeHost(ctl=False))
    assert result["diagnosis"].startswith("missing NVIDIA device nodes (/dev/nvidiactl missing, 8 of 8")


def test_driver_library_mismatch_needs_a_reboot():
    smi = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.105.08\n"
    result, _ = check({"nvidia-smi -L": (18, smi)})
    assert result["diagnosis"] == ("driver/library version mismatch: the loaded kernel module is 580.159.04, the user-space"
                                   " driver is 580.105.08 (the driver was upgraded without a reboot)")
    assert result["fix"].startswith("reboot the host")


def test_no_docker():
    # As on a real H200 host without Docker (driver 580.159.04): the host checks pass, the container one cannot run.
    result, _ = check({"docker run --rm --gpus all": (127, "docker: command not found")})
    assert [c["ok"] for c in result["checks"]] == [True, True, True, False]
    assert (result["diagnosis"], result["fix"]) == ("Docker is not installed (no docker command)",
                                                    "install it (ansible role docker)")


def test_no_runtime_in_docker():
    out = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    result, _ = check({"docker run --rm --gpus all": (125, out)})
    assert result["diagnosis"].startswith("Docker has no NVIDIA runtime")
    assert "nvidia-ctk runtime configure --runtime=docker" in result["fix"]


def test_the_cgroup_driver_issue_after_daemon_reload():
    result, run = check({"docker exec": (255, "Failed to initialize NVML: Unknown Error\n")})
    assert result["diagnosis"].startswith("the cgroup driver issue: with Docker's systemd cgroup driver")
    assert "nvidia_container_toolkit_dev_char_symlinks" in result["fix"]
    assert ["systemctl", "daemon-reload"] in run.calls
    assert run.calls[-1] == ["docker", "rm", "-f", "reprokit-gpu-check"]


def test_daemon_reload_check_only_with_systemd_cgroups():
    result, run = check({"docker info": (0, "cgroupfs\n")})
    assert result["ok"] and result["cgroup_driver"] == "cgroupfs"
    assert ["systemctl", "daemon-reload"] not in run.calls


def test_fewer_gpus_in_the_container():
    result, _ = check({"docker run --rm --gpus all": (0, SMI_8.split("\n", 4)[0] + "\n")})
    assert result["diagnosis"] == "the container sees 1 GPU(s), the host 8"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_the_script_runs_here_and_says_no_module():
    """On this GPU-less machine the real script stops at the first check, as JSON, with exit code 1."""
    proc = subprocess.run([sys.executable, str(SCRIPT), "--image", IMAGE], capture_output=True, text=True, timeout=60)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert result["diagnosis"] == "the nvidia kernel module is not loaded"
