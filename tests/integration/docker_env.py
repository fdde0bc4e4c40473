"""The Docker engine, local registry and images of tests/services/up.d/20-docker.sh, as the tests see them.

``DOCKER`` is None (and ``REASON`` says why) when the service could not be set up; tests skip with it.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

STATE = REPO / ".cache" / "services"
UNAVAILABLE = STATE / "docker.unavailable"
ENV_FILE = STATE / "docker.env"


def _read_env() -> tuple[dict[str, str] | None, str | None]:
    if UNAVAILABLE.exists():
        return None, f"docker unavailable: {UNAVAILABLE.read_text().strip()}"
    if not ENV_FILE.exists():
        return None, "docker test services are not set up; run tests/services/up (./dev test does)"
    env = dict(line.split("=", 1) for line in ENV_FILE.read_text().splitlines() if "=" in line)
    probe = subprocess.run([env["DOCKER_CLI"], "info"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"dockerd is not running ({probe.stderr.strip()[:200]}); run tests/services/up"
    return env, None


ENV, REASON = _read_env()
DOCKER = ENV["DOCKER_CLI"] if ENV else None
REGISTRY = ENV["REGISTRY"] if ENV else None
# The debootstrapped Debian, pinned by the digest the local registry gave it: stands in for the CUDA and sglang bases.
BASE_REF = f"{ENV['BASE_IMAGE']}@{ENV['BASE_DIGEST']}" if ENV else None


def docker(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    assert DOCKER is not None
    result = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args[:3])} failed ({result.returncode}): {result.stderr.strip()}")
    return result


@dataclass
class ContainerHost:
    """A container from the test host image: systemd, sshd on a loopback port, user `admin` with sudo."""

    name: str
    port: int
    host_key: str  # "ssh-ed25519 AAAA..."

    def sh(self, command: str, check: bool = True) -> subprocess.CompletedProcess:
        return docker("exec", self.name, "sh", "-c", command, check=check)

    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} {self.host_key}\n"

    def remove(self) -> None:
        docker("rm", "-f", self.name, check=False)


DOUBLES = REPO / "tests" / "doubles"


def start_test_host(public_key: Path, prefix: str = "rk-prov", gpu: bool = False) -> ContainerHost:
    """Start a fresh test host and wait until its sshd answers; the caller removes it.

    ``gpu``: a GPU host from the outside, as the GPU roles look at one: an NVIDIA GPU on its PCI bus (a sysfs double
    over /sys/bus/pci/devices) and a working driver's nvidia-smi (tests/doubles/README.md).
    """
    assert ENV is not None
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    gpu_args = ["-v", f"{DOUBLES / 'sysfs-pci'}:/sys/bus/pci/devices:ro",
                "-v", f"{DOUBLES / 'sglang-server' / 'nvidia-smi'}:/usr/bin/nvidia-smi:ro"] if gpu else []
    # systemd as PID 1 needs the cgroup tree and tmpfs /run; Docker inside it (the docker role) needs
    # SYS_ADMIN and NET_ADMIN. No --privileged: this machine may not grant every capability.
    docker("run", "-d", "--name", name, "--hostname", name, "--label", "io.reprokit.test=host", "--cap-add", "SYS_ADMIN", "--cap-add", "NET_ADMIN",
           "--security-opt", "seccomp=unconfined", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--cgroupns=host",
           "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", *gpu_args, "-p", "127.0.0.1::22", ENV["TESTHOST_IMAGE"])
    host = None
    try:
        docker("cp", str(public_key), f"{name}:/home/admin/.ssh/authorized_keys")
        docker("exec", name, "chown", "admin:admin", "/home/admin/.ssh/authorized_keys")
        port = int(docker("port", name, "22/tcp").stdout.split()[0].rsplit(":", 1)[1])
        key = " ".join(docker("exec", name, "cat", "/etc/ssh/ssh_host_ed25519_key.pub").stdout.split()[:2])
        host = ContainerHost(name, port, key)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = docker("exec", name, "systemctl", "is-active", "ssh", check=False).stdout.strip()
            if state == "active":
                return host
            time.sleep(0.5)
        raise AssertionError(f"sshd did not start in test host {name}")
    except BaseException:
        docker("rm", "-f", name, check=False)
        raise
