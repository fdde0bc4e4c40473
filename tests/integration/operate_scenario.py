"""One scenario of `status`, `logs [-f]` and `cancel` on a run in flight, for any host (an SSH host, the Slurm cluster).

The run's step prints "probe started" and hangs; the commands are the real CLI, each in its own process, as a person
in a second terminal would type them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest
from tests.conftest import REPO, run_invoke


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "invoke", "--search-root", str(REPO), *argv]


def operate_a_hanging_run(tmp_path: Path, inventory: Path, known: Path, host: str,
                          started: Callable[[], bool]) -> tuple[dict, subprocess.CompletedProcess]:
    """Start the run, watch it, follow its log, cancel it, collect it; the status row and the collect's result."""
    runs = tmp_path / "runs"
    where = ["--runs-dir", str(runs), "--inventory", str(inventory), "--known-hosts", str(known)]
    run = subprocess.Popen(cli("repro", "smem-probe", "--host", host, *where), cwd=REPO, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started():
        assert time.monotonic() < deadline and run.poll() is None, "the step never started"
        time.sleep(0.2)
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]
    status = run_invoke("status", *where, "--json", timeout=120)
    assert status.returncode == ExitCode.PASS, status.stderr
    (row,) = json.loads(status.stdout)
    logs = run_invoke("logs", run_dir.name, *where, timeout=120)
    assert (logs.returncode, logs.stdout) == (ExitCode.PASS, "probe started\n"), logs.stderr
    follower = subprocess.Popen(cli("logs", run_dir.name, "--follow", *where), cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    assert follower.poll() is None  # it follows: the step still runs
    cancel = run_invoke("cancel", run_dir.name, *where, "--json", timeout=120)
    assert cancel.returncode == ExitCode.PASS, cancel.stderr
    assert json.loads(cancel.stdout)["status"] == "killed"
    out, err = follower.communicate(timeout=120)
    assert (follower.returncode, out) == (ExitCode.STEP_ERROR, "probe started\n"), err  # it ended, stopped (130)
    run.communicate(timeout=60)
    assert run.returncode == -9  # the run's own process was ended outright: it judged nothing
    manifest = load_manifest(run_dir)
    assert (manifest.status, manifest.in_flight.step) == ("killed", "probe")
    assert manifest.status_detail.startswith("cancelled at ")
    assert json.loads(run_invoke("status", *where, "--json", timeout=120).stdout)[0]["state"].startswith("ended")
    collect = run_invoke("collect", run_dir.name, *where, "--json", timeout=300)
    assert (run_dir / "steps" / "probe" / "step.log").read_text() == "probe started\n"  # what it wrote came back
    return row, collect
