"""The serve wait on real server logs (tests/fixtures/real, verbatim from upstream threads): the phases it reports as
lines arrive, where it stops (the first fatal line), and the outcome of a wait on a live process whose log ends
in a fatal line while it stays up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reprokit.workloads.serve import wait_ready
from reprokit.workloads.serve_log import FatalLine, ServerLogWatch

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
AUTOTUNE_THEN_CAPTURE = REAL / "club-3090-1261-sglang-2x5090-autotune-completed.log"  # 2x RTX 5090, sglang
SCHEDULER_DIED_IN_AUTOTUNE = REAL / "sglang-12306-scheduler-exception-in-flashinfer-autotune.log"
SIGQUIT_THEN_EXCEPTION = REAL / "sglang-8864-gpt-oss-oom-sigquit.log"


def grow(log: Path, data: bytes, pieces: int) -> list[str]:
    """Append ``data`` to ``log`` in ``pieces`` cuts (mid-line too) and read after each, as the wait does."""
    watch, notes = ServerLogWatch(log), []
    cuts = [len(data) * i // pieces for i in range(pieces + 1)]
    for start, end in zip(cuts, cuts[1:]):
        with open(log, "ab") as fh:
            fh.write(data[start:end])
        notes += watch.read()
    return notes


@pytest.mark.parametrize("pieces", [1, 7, 97])
def test_phases_of_a_real_start_as_its_lines_arrive(tmp_path: Path, pieces: int) -> None:
    log = tmp_path / "server.log"
    notes = grow(log, AUTOTUNE_THEN_CAPTURE.read_bytes(), pieces)
    # each op once, whichever rank printed it (both ranks tuned fp4_gemm twice, then fp8_gemm); then the capture
    assert notes == ["autotuning fp4_gemm 4 of 4 (server.log:1)", "autotuning fp8_gemm 4 of 4 (server.log:5)",
                     "capturing CUDA graphs (server.log:9)"]


def test_a_tqdm_bar_redrawn_with_cr_reports_each_new_count_before_its_line_ends(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    bar = "[AutoTuner]: Tuning trtllm::fused_moe::gemm1:  {}%|          | {}/6 [00:00<00:01,  3.76profile/s]"
    log.write_bytes(b"[2025-02-22 08:19:45 TP0] Load weight begin. avail mem=78.38 GB\n")
    watch = ServerLogWatch(log)
    assert watch.read() == ["loading weights (server.log:1)"]
    with open(log, "ab") as fh:
        fh.write(("\r".join(bar.format(p, k) for p, k in ((0, 0), (17, 1), (33, 2))) + "\r").encode())
    assert watch.read() == ["autotuning trtllm::fused_moe::gemm1 0 of 6 (server.log:2)",
                            "autotuning trtllm::fused_moe::gemm1 1 of 6 (server.log:2)",
                            "autotuning trtllm::fused_moe::gemm1 2 of 6 (server.log:2)"]
    with open(log, "ab") as fh:
        fh.write((bar.format(100, 6) + "\n").encode())
    assert watch.read() == ["autotuning trtllm::fused_moe::gemm1 6 of 6 (server.log:2)"]


def test_the_wait_stops_at_the_first_fatal_line_of_a_real_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    notes = grow(log, SCHEDULER_DIED_IN_AUTOTUNE.read_bytes(), 5)
    text = "[2025-11-18 13:28:40 TP0] Scheduler hit an exception: Traceback (most recent call last):"
    assert notes == [f"fatal line, stopped waiting: server.log:1: {text}"]


def test_the_first_fatal_line_is_the_one_cited_even_when_the_cause_comes_next(tmp_path: Path) -> None:
    """sglang 8864: the parent's SIGQUIT line, then in the same second the scheduler's exception (the triage's
    cause); the wait stops at the first one, and the triage reads the rest afterwards."""
    log = tmp_path / "server.log"
    log.write_bytes(SIGQUIT_THEN_EXCEPTION.read_bytes())
    watch = ServerLogWatch(log)
    watch.read()
    assert watch.fatal == FatalLine(
        "server.log", 1, "[2025-08-06 20:26:20] Received sigquit from a child process. It usually means the child failed.")
    assert watch.read() == []


def test_a_live_server_whose_log_ends_in_a_fatal_line_ends_the_wait_fatal(tmp_path: Path, capsys) -> None:
    """A real process writes the real log and stays up, its port never open: the outcome is 'fatal' in seconds,
    not 'timeout' after 60 s, and not 'exited' (it is still running)."""
    log = tmp_path / "server.log"
    writer = ("import sys, time; data = open(sys.argv[1], 'rb').read(); out = open(sys.argv[2], 'ab', buffering=0)\n"
              "for line in data.splitlines(keepends=True):\n    out.write(line); time.sleep(0.01)\ntime.sleep(600)")
    with open(log, "wb"):
        pass
    proc = subprocess.Popen([sys.executable, "-c", writer, str(SCHEDULER_DIED_IN_AUTOTUNE), str(log)])
    try:
        outcome, _ = wait_ready(proc, port=9, timeout_s=60, log=ServerLogWatch(log))
        assert outcome == "fatal" and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    text = "[2025-11-18 13:28:40 TP0] Scheduler hit an exception: Traceback (most recent call last):"
    assert capsys.readouterr().err.splitlines() == [f"serve: fatal line, stopped waiting: server.log:1: {text}"]
