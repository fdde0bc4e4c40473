"""The real Slurm cluster (tests/services/up.d/40-slurm.sh): its login node over the test SSH, jobs, faults."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.doubles.libcuda import gpu_python

SERVICES = REPO / ".cache" / "services"
STATE = SERVICES / "slurm"
SSH_KEY = SERVICES / "sshhosts" / "id_ed25519"
LOGIN = "10.213.0.20"


def _reason() -> str | None:
    for name in ("sshhosts", "slurm"):
        flag = SERVICES / f"{name}.unavailable"
        if flag.exists():
            return f"{name} unavailable: {flag.read_text().strip()}"
    if not (STATE / "login" / "ssh_host_ed25519_key.pub").exists() or shutil.which("squeue") is None:
        return "the test Slurm cluster is not set up; run tests/services/up (./dev test does)"
    return None


REASON = _reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def workdir(tag: str) -> Path:
    """A fresh workdir on the cluster's shared file system for one test."""
    path = Path("/srv/rk-hosts/login") / tag
    if path.exists():
        subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    shutil.chown(path, "rkuser", "rkuser")
    return path


def known_hosts(path: Path) -> Path:
    key_type, key, _ = (STATE / "login" / "ssh_host_ed25519_key.pub").read_text().split(" ", 2)
    path.write_text(f"{LOGIN} {key_type} {key}\n")
    return path


def inventory(path: Path, work: Path, **slurm_vars) -> Path:
    """An inventory with the Slurm host `cluster` (and the SSH test host h5, for comparisons)."""
    values = {"slurm_partition": "debug", "slurm_gres": "gpu:1", **slurm_vars}
    lines = ["all:", "  vars:", "    ansible_user: rkuser", f"    ansible_ssh_private_key_file: {SSH_KEY}",
             "    runtime: native", f"    ansible_python_interpreter: {gpu_python()}", "  hosts:", "    cluster:", f"      ansible_host: {LOGIN}",
             f"      workdir: {work}", "      launcher: slurm"]
    lines += [f"      {key}: {json.dumps(value)}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def fake_python(work: Path, body: str) -> Path:
    """A test double for the nodes' Python: ``body`` (sh) runs for the smem-probe workload, the GPU nodes' otherwise."""
    script = work / "fake-python"
    script.write_text("#!/bin/sh\n" 'case "$*" in\n' f"  *smem_probe*)\n{body}\n    ;;\n" "esac\n" f'exec {gpu_python()} "$@"\n')
    script.chmod(0o755)
    shutil.chown(script, "rkuser", "rkuser")
    return script


def squeue(part: str = "") -> list[dict[str, str]]:
    """The cluster's live jobs (the controller's view), those whose name or directory holds ``part``."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%j|%T|%N|%Z"], capture_output=True, text=True, check=True).stdout
    jobs = [dict(zip(("id", "name", "state", "nodes", "dir"), line.split("|"))) for line in out.splitlines() if line]
    return [j for j in jobs if part in j["name"] or part in j["dir"]]


def wait_for_job(name_part: str, state: str = "RUNNING", timeout_s: float = 60, step: str = "probe") -> dict[str, str]:
    """The live job of ``step`` (its name ends with it) whose name or directory holds ``name_part``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        jobs = [j for j in squeue(name_part) if j["state"] == state and j["name"].endswith(f"-{step}")]
        if jobs:
            return jobs[0]
        time.sleep(0.3)
    raise AssertionError(f"no {state} job named *{name_part}* after {timeout_s} s: {squeue()}")


def scontrol_job(job_id: str) -> dict[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True).stdout
    return dict(word.split("=", 1) for word in out.split() if "=" in word)


def resume_nodes() -> None:
    """Put the compute nodes back after a test set one DOWN (ReturnToService does not undo an admin's DOWN)."""
    subprocess.run(["scontrol", "update", "nodename=c1,c2", "state=resume"], capture_output=True, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run(["sinfo", "-h", "-p", "debug", "-t", "idle,mix,alloc", "-o", "%D"], capture_output=True,
                             text=True).stdout.split()
        if out and int(out[0]) == 2:
            return
        time.sleep(1)
