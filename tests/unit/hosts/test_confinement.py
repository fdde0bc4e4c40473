"""How a step is confined on its host (``CONFINE_SH`` in launchers/session.py), run by a real shell here.

The choice: a systemd user scope where a user manager answers, else a cgroup v2 directory this user may write,
else the /proc sweep of its mark alone. The choice reads a mounts file and a cgroup file, so each case is a pair
of files here; the cgroup path itself runs for real in this machine's cgroup v2 hierarchy where it is writable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from reprokit.hosts.launchers.session import CONFINE_SH, EXIT_PLACEHOLDER, mark_pattern, wrapper_script

V1_MOUNTS = "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"


def confinement(tmp_path: Path, mounts: str, cgroup: str, path_dirs: list[Path] = (), as_nobody: bool = False) -> str:
    (tmp_path / "mounts").write_text(mounts)
    (tmp_path / "cgroup").write_text(cgroup)
    env = {"PATH": ":".join([*map(str, path_dirs), os.environ["PATH"]])}
    argv = ["sh", "-c", f'{CONFINE_SH}\nconfinement "$0" "$1"', str(tmp_path / "mounts"), str(tmp_path / "cgroup")]
    if as_nobody:
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout.strip()


def systemd_run_double(tmp_path: Path, exit_code: int) -> Path:
    """A test double for ``systemd-run``: a user manager that answers (0) or not (1, "Failed to connect to bus")."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "systemd-run"
    script.write_text(f"#!/bin/sh\n[ {exit_code} = 0 ] || echo 'Failed to connect to bus: No medium found' >&2\n"
                      f"exit {exit_code}\n")
    script.chmod(0o755)
    return bin_dir


def delegated(tmp_path: Path) -> tuple[str, Path]:
    """A cgroup2 mount at tmp/cg whose directory /a/b (this process's cgroup) has a cgroup.procs."""
    leaf = tmp_path / "cg" / "a" / "b"
    leaf.mkdir(parents=True)
    (leaf / "cgroup.procs").write_text("")
    return f"{V1_MOUNTS}cgroup2 {tmp_path / 'cg'} cgroup2 rw,nosuid 0 0\n", leaf


def test_a_user_manager_that_answers_gives_a_systemd_scope(tmp_path):
    mounts, _ = delegated(tmp_path)
    assert confinement(tmp_path, mounts, "0::/a/b\n", [systemd_run_double(tmp_path, 0)]) == "systemd"


def test_without_a_user_manager_a_writable_v2_directory_is_nested_in(tmp_path):
    mounts, leaf = delegated(tmp_path)
    assert confinement(tmp_path, mounts, "0::/a/b\n", [systemd_run_double(tmp_path, 1)]) == f"cgroup {leaf}"


def test_a_v2_directory_this_user_cannot_write_leaves_the_sweep(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("runs the choice as another user, which needs root")
    mounts, _ = delegated(tmp_path)
    tmp_path.chmod(0o755)
    assert confinement(tmp_path, mounts, "0::/a/b\n", [systemd_run_double(tmp_path, 1)], as_nobody=True) == "proc"


def test_cgroup_v1_only_or_no_v2_entry_leaves_the_sweep(tmp_path):
    no_manager = [systemd_run_double(tmp_path, 1)]
    assert confinement(tmp_path, V1_MOUNTS, "4:memory:/x\n0::/\n", no_manager) == "proc"
    mounts, _ = delegated(tmp_path)
    assert confinement(tmp_path, mounts, "4:memory:/x\n", no_manager) == "proc"  # this process has no v2 cgroup
    assert confinement(tmp_path, mounts, "0::/gone\n", no_manager) == "proc"  # its directory is not there


def test_mark_patterns_match_one_step_or_every_step_of_a_run():
    assert mark_pattern("20261202T184100Z-smem-probe-h2-ab12") == "20261202T184100Z-smem-probe-h2-ab12/[^/]*"
    assert mark_pattern("r.1", "probe.v2") == "r\\.1/probe\\.v2"


UNIFIED = Path("/sys/fs/cgroup/unified")


def own_v2_parent() -> Path | None:
    """This process's cgroup v2 directory, where this user may nest a cgroup (as on a host that allows it)."""
    line = next((ln for ln in Path("/proc/self/cgroup").read_text().splitlines() if ln.startswith("0::")), None)
    mounts = [ln.split()[1] for ln in Path("/proc/self/mounts").read_text().splitlines() if ln.split()[2] == "cgroup2"]
    if not line or not mounts:
        return None
    parent = Path(mounts[0] + line[3:].rstrip("/"))
    return parent if os.access(parent, os.W_OK) and os.access(parent / "cgroup.procs", os.W_OK) else None


@pytest.mark.skipif(own_v2_parent() is None or shutil.which("systemd-run") and subprocess.run(
    ["systemd-run", "--user", "--scope", "--quiet", "true"], capture_output=True).returncode == 0,
                    reason="needs a writable cgroup v2 directory and no systemd user manager")
def test_a_step_in_its_own_cgroup_loses_a_grandchild_that_dropped_its_mark(tmp_path):
    """``env -u`` drops the mark and ``setsid`` leaves the session: only the cgroup still holds the grandchild."""
    step_dir = tmp_path / "run-1" / "probe"
    step_dir.mkdir(parents=True)
    (step_dir / "exit_code").write_bytes(EXIT_PLACEHOLDER)
    command = ("sh -c 'env -u REPROKIT_RUN setsid sh -c \"sleep 600 & echo \\$! > escapee.pid\" < /dev/null;"
               " while [ ! -s escapee.pid ]; do sleep 0.05; done'")
    (step_dir / "run.sh").write_text(wrapper_script(command, 60))
    subprocess.run(["setsid", "--wait", "sh", str(step_dir / "run.sh")], check=True, timeout=60)
    assert (step_dir / "exit_code").read_text() == "0      \n"
    escapee = int((step_dir / "escapee.pid").read_text())
    cgroup_dir = Path((step_dir / "cgroup").read_text().strip())
    assert cgroup_dir.parent == own_v2_parent() and cgroup_dir.name.startswith("reprokit-")
    assert not cgroup_dir.exists()  # killed whole, then removed
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{escapee}") and open(f"/proc/{escapee}/stat").read().split()[2] != "Z":
        assert time.monotonic() < deadline, "the grandchild outlived its step's cgroup"
        time.sleep(0.05)
