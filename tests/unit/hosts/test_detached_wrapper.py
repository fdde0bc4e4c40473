"""The detached step's wrapper (run.sh), run by a real shell here: exit code, log, timeout, secrets, session clean-up.

On a host it is started by ``setsid -f`` over SSH (tests/integration/remote/); here by ``setsid --wait``, so that it
leads its own session exactly as there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from reprokit.hosts.launchers.session import EXIT_PLACEHOLDER, KILL_AFTER_S, wrapper_script

pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("setsid", "timeout", "pgrep")),
                                reason="needs setsid, timeout and pgrep (util-linux, coreutils, procps)")


def run_wrapper(step_dir, command: str, timeout_s: float = 60, cleanup: str = "") -> str:
    (step_dir / "exit_code").write_bytes(EXIT_PLACEHOLDER)
    (step_dir / "run.sh").write_text(wrapper_script(command, timeout_s, cleanup))
    subprocess.run(["setsid", "--wait", "sh", str(step_dir / "run.sh")], check=True, timeout=30)
    return (step_dir / "exit_code").read_text()


def test_exit_code_overwrites_the_placeholder_and_the_log_holds_both_streams(tmp_path):
    assert run_wrapper(tmp_path, "sh -c 'echo out; echo err >&2; exit 3'") == "3      \n"
    assert (tmp_path / "step.log").read_text() == "out\nerr\n"
    assert (tmp_path / "pid").read_text().strip().isdigit()


def test_the_remote_timeout_ends_the_step_with_124(tmp_path):
    started = time.monotonic()
    assert run_wrapper(tmp_path, "sleep 30", timeout_s=1) == "124    \n"
    assert time.monotonic() - started < 1 + KILL_AFTER_S


def test_the_shell_secrets_file_is_read_then_gone_before_the_step_runs(tmp_path):
    (tmp_path / ".secrets.sh").write_text("HF_TOKEN='hf_s3cret'\n")
    assert run_wrapper(tmp_path, "sh -c 'echo \"$HF_TOKEN\"; ls -a'") == "0      \n"
    log = (tmp_path / "step.log").read_text().splitlines()
    assert log[0] == "hf_s3cret" and ".secrets.sh" not in log


def test_what_the_step_left_running_in_its_session_is_killed(tmp_path):
    assert run_wrapper(tmp_path, "sh -c 'sleep 300 & echo $! > bg.pid'") == "0      \n"
    pid = int((tmp_path / "bg.pid").read_text())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z":
        assert time.monotonic() < deadline, "the background process outlived its step"
        time.sleep(0.05)


def test_the_runtimes_cleanup_runs_after_the_step(tmp_path):
    assert run_wrapper(tmp_path, "true", cleanup=f"echo cleaned > {tmp_path}/cleanup.txt") == "0      \n"
    assert (tmp_path / "cleanup.txt").read_text() == "cleaned\n"
