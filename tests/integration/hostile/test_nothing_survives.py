"""Nothing of a run survives it on the host (issue #28, item 4), against the real sshd test host.

The workload double-forks with ``setsid``: the grandchild leads a session of its own, so the wrapper's kill of its
session misses it. Before, it outlived the run and the host's lock was released while it still ran. Now every
process of the step carries its mark (REPROKIT_RUN=<run id>/<step>) and the sweep of /proc kills it; the test
hosts have no cgroup this user may write (cgroup v1 with a root-owned v2 hierarchy), so the sweep is what runs
here. A process that cannot die (frozen by the v1 freezer) keeps the lock, and the record says so.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from reprokit.commands.run import run_exit_code
from reprokit.errors import ExitCode
from tests.integration.hostile.conftest import RESULT_OK, step
from tests.integration.remote.conftest import alive

FREEZER = Path("/sys/fs/cgroup/freezer")


def escape(pid_file: Path, then: str = "") -> str:
    """The probe's body: a grandchild in a session of its own, still running when the probe exits."""
    return (f"setsid sh -c 'setsid sleep 600 < /dev/null > /dev/null 2>&1 & echo $! > {pid_file}' < /dev/null;"
            f" while [ ! -s {pid_file} ]; do sleep 0.05; done; {then}{RESULT_OK}")


def marked_processes(run_id: str) -> list[int]:
    """The processes of this machine (the test hosts share its process table) that carry a mark of ``run_id``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(value.startswith(f"REPROKIT_RUN={run_id}/".encode()) for value in environ):
            found.append(int(entry.name))
    return found


def test_a_setsid_grandchild_is_swept_and_the_lock_released_after_it(rig):
    pid_file = rig.work / "escapee.pid"
    outcome, manifest, _ = rig.run(escape(pid_file))
    escapee = int(pid_file.read_text())
    assert manifest["status"] == "complete" and step(manifest)["status"] == "ok"
    assert alive(escapee) is False
    assert marked_processes(outcome.run_dir.name) == []
    assert not (rig.work / "lock").exists()
    assert "host_left" not in manifest
    assert rig.remote_runs() == []


@pytest.mark.skipif(not os.access(FREEZER, os.W_OK), reason="needs the cgroup v1 freezer (root) to make a process unkillable")
def test_a_process_that_survives_its_kill_keeps_the_lock_and_the_record_says_so(rig):
    pid_file, go = rig.work / "escapee.pid", rig.work / "go"
    frozen = FREEZER / f"reprokit-test-{os.getpid()}"
    frozen.mkdir()

    def freeze_the_escapee() -> None:  # the host's side: a process that SIGKILL cannot end while it is frozen
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text().strip():
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        (frozen / "tasks").write_text(pid_file.read_text().strip())
        (frozen / "freezer.state").write_text("FROZEN")
        go.write_text("frozen\n")

    freezer = threading.Thread(target=freeze_the_escapee)
    freezer.start()
    try:
        outcome, manifest, _ = rig.run(escape(pid_file, f"while [ ! -f {go} ]; do sleep 0.05; done; "))
        freezer.join()
        escapee = int(pid_file.read_text())
        run_id = outcome.run_dir.name
        assert run_exit_code(outcome) == ExitCode.FAIL  # the probe saw no GPU: judged as any run
        assert marked_processes(run_id) == [escapee] and alive(escapee)
        line = (f"1 process(es) of run {run_id} survived being killed on h2; its lock stays: end them there, then"
                " `invoke unlock --host h2`")
        assert manifest["host_left"] == line
        assert f"      {line}" in rig.messages
        assert (rig.work / "lock" / "owner.json").exists()
    finally:
        (frozen / "freezer.state").write_text("THAWED")
        freezer.join()
        deadline = time.monotonic() + 10
        while (frozen / "tasks").read_text().strip() and time.monotonic() < deadline:  # the KILL lands once thawed
            time.sleep(0.05)
        frozen.rmdir()
    assert alive(escapee) is False
