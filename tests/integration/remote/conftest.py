"""Real OpenSSH test hosts (tests/services/up.d/10-sshhosts.sh): addresses, keys, inventories, host-side test doubles.

A test host is a GPU host from the outside: its inventory names a python3 whose CUDA driver is the libcuda double
(tests/doubles/libcuda), so its fingerprint finds an sm120 GPU and its GPU steps run as on a real one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.doubles.libcuda import gpu_python

STATE = REPO / ".cache" / "services" / "sshhosts"
UNAVAILABLE = REPO / ".cache" / "services" / "sshhosts.unavailable"
ADDRESSES = {**{f"h{i}": f"10.213.0.{10 + i}" for i in range(1, 9)}, "gw": "10.213.0.2", "priv": "10.214.0.10"}


def _reason() -> str | None:
    if UNAVAILABLE.exists():
        return f"SSH test hosts unavailable: {UNAVAILABLE.read_text().strip()}"
    if not (STATE / "id_ed25519").exists():
        return "SSH test hosts are not set up; run tests/services/up (./dev test does)"
    return None


REASON = _reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def host_workdir(name: str, tag: str) -> Path:
    """A fresh workdir for one test on one host (the hosts share this machine's filesystem)."""
    path = Path("/srv/rk-hosts") / name / tag
    if path.exists():
        subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    shutil.chown(path, "rkuser", "rkuser")
    return path


def known_hosts_for(path: Path, *names: str) -> Path:
    lines = []
    for name in names:
        key_type, key, _ = (STATE / name / "ssh_host_ed25519_key.pub").read_text().split(" ", 2)
        lines.append(f"{ADDRESSES[name]} {key_type} {key}\n")
    path.write_text("".join(lines))
    return path


def write_inventory(path: Path, hosts: dict[str, dict], groups: dict[str, list[str]] | None = None,
                    gpu: bool = True) -> Path:
    """The hosts as GPU hosts (the libcuda double's python3), or with ``gpu=False`` as the GPU-less hosts they are."""
    lines = ["all:", "  vars:", "    ansible_user: rkuser", f"    ansible_ssh_private_key_file: {STATE / 'id_ed25519'}",
             "    runtime: native", *([f"    ansible_python_interpreter: {gpu_python()}"] if gpu else []), "  hosts:"]
    for name, hostvars in hosts.items():
        lines.append(f"    {name}:")
        for key, value in {"ansible_host": ADDRESSES[name.split('-')[0]], **hostvars}.items():
            lines.append(f"      {key}: {value}")
    if groups:
        lines.append("  children:")
        for group, members in groups.items():
            lines.append(f"    {group}:")
            lines.append("      hosts:")
            lines += [f"        {m}:" for m in members]
    path.write_text("\n".join(lines) + "\n")
    return path


def fake_python(workdir: Path, body: str) -> Path:
    """A test double for the host's Python: `body` (sh) runs for the smem-probe workload, the GPU host's otherwise."""
    script = workdir / "fake-python"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f"  *smem_probe*)\n{body}\n    ;;\n"
        "esac\n"
        f'exec {gpu_python()} "$@"\n'
    )
    script.chmod(0o755)
    shutil.chown(script, "rkuser", "rkuser")
    return script


def sshd_master_pid(name: str) -> int:
    return int((STATE / name / "sshd.pid").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"
