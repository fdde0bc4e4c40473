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


FAULT_TOOLS = ("sbatch", "squeue", "sacct", "scontrol")
WRAPPER = """#!/bin/sh
# A fault injector for one test: the real {tool}, unless this test's control files say otherwise.
ctl={ctl}
if [ -f "$ctl/{tool}.fail-until" ] && [ "$(date +%s)" -lt "$(cat "$ctl/{tool}.fail-until")" ]; then
  echo "slurm_load_jobs error: Socket timed out on send/recv operation" >&2; exit 1
fi
[ -f "$ctl/{tool}.instead" ] && exec sh "$ctl/{tool}.instead" "$@"
[ -f "$ctl/{tool}.hang" ] && sleep "$(cat "$ctl/{tool}.hang")"
if [ -f "$ctl/{tool}.after" ]; then /usr/bin/{tool} "$@"; rc=$?; sh "$ctl/{tool}.after"; exit $rc; fi
exec /usr/bin/{tool} "$@"
"""


class FaultyLogin:
    """A second sshd of the login node, for one test: its sessions' PATH starts with this test's wrappers of the
    job tools, so the faults it injects reach this test's run and no other engineer's or test's."""

    def __init__(self, root: Path):
        self.root = root
        self.ctl = root / "ctl"
        self.bin = root / "bin"
        self.port = 0
        self.pid_file = root / "sshd.pid"

    def start(self) -> None:
        for path in (self.root, self.ctl, self.bin):
            path.mkdir(mode=0o755, exist_ok=True)
        for tool in FAULT_TOOLS:
            wrapper = self.bin / tool
            wrapper.write_text(WRAPPER.format(tool=tool, ctl=self.ctl))
            wrapper.chmod(0o755)
        login = STATE / "login"
        base = (login / "sshd_config").read_text()
        for port in range(22401, 22500):
            config = self.root / "sshd_config"
            config.write_text("\n".join(line for line in base.splitlines()
                                        if not line.startswith(("Port ", "PidFile "))) +
                              f"\nPort {port}\nPidFile {self.pid_file}\nSetEnv PATH={self.bin}:/usr/local/bin:/usr/bin:/bin\n")
            started = subprocess.run(["ip", "netns", "exec", "rk-login", "/usr/sbin/sshd", "-f", str(config), "-E",
                                      str(self.root / "sshd.log")], capture_output=True, text=True)
            deadline = time.monotonic() + 5
            while started.returncode == 0 and not self.pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            if started.returncode == 0 and self.pid_file.exists():
                self.port = port
                return
        raise AssertionError(f"no port for the fault injector's sshd: {(self.root / 'sshd.log').read_text()[-500:]}")

    def stop(self) -> None:
        if self.pid_file.exists():
            subprocess.run(["kill", self.pid_file.read_text().strip()], check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def fail(self, tool: str, for_s: float) -> None:
        """``tool`` fails as a controller that times out does, for the next ``for_s`` seconds."""
        (self.ctl / f"{tool}.fail-until").write_text(f"{int(time.time() + for_s)}\n")

    def after(self, tool: str, script: str) -> None:
        """sh run after the real ``tool`` has done its work, before it returns (noise, slowness)."""
        (self.ctl / f"{tool}.after").write_text(script)

    def instead(self, tool: str, script: str) -> None:
        """sh run in place of ``tool`` (a refusal of the site's own words)."""
        (self.ctl / f"{tool}.instead").write_text(script)

    def hang(self, tool: str, for_s: int) -> None:
        """``tool`` says nothing for ``for_s`` seconds (each call), then does its work."""
        (self.ctl / f"{tool}.hang").write_text(f"{for_s}\n")

    def heal(self) -> None:
        for path in self.ctl.iterdir():
            path.unlink()

    def known_hosts(self, path: Path) -> Path:
        key_type, key, _ = (STATE / "login" / "ssh_host_ed25519_key.pub").read_text().split(" ", 2)
        path.write_text(f"[{LOGIN}]:{self.port} {key_type} {key}\n")
        return path


@pytest.fixture
def faulty_login(request):
    injector = FaultyLogin(Path("/srv/rk-hosts/login") / f".faults-{request.node.name[:40]}")
    injector.start()
    try:
        yield injector
    finally:
        injector.stop()
