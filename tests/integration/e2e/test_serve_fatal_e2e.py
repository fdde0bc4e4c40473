"""ep8-crash against the serve double when a scheduler dies inside FlashInfer's autotune and the server stays up:
the serve step says each phase from the live log, stops at the fatal line, cites it and ends 'fatal' long before
its ready timeout. Real SSH, Docker, workloads, triage, judge; only the server is a double."""

from __future__ import annotations

import json

import pytest

from reprokit.errors import ExitCode
from tests.integration.e2e.test_ep8_crash_e2e import host_with_model, serve_double  # noqa: F401 - a fixture
from tests.integration.remote.test_remote_docker import BASE
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

pytestmark = pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")
FATAL = "[2025-11-18 13:28:40 TP0] Scheduler hit an exception: Traceback (most recent call last):"


def test_the_serve_wait_stops_at_the_first_fatal_line(tmp_path, serve_double) -> None:  # noqa: F811
    _, inventory, known = host_with_model(tmp_path, "fatal")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                        "--image", f"serve={serve_double}", "--json", "--quiet",
                        "--set", "serve.env={REPROKIT_DOUBLE_FATAL: autotune}", "--set", "serve.ready_timeout_s=240",
                        kit="ep8-crash")
    (run_dir,) = runs_in(tmp_path / "runs")
    serve_dir = run_dir / "steps" / "serve"
    serve = json.loads((serve_dir / "result.json").read_text())
    assert (serve["outcome"], serve["ready"], serve["ready_after_s"]) == ("fatal", False, None)
    assert serve["fatal_line"] == {"file": "server.log", "line": 50, "text": FATAL}
    assert (serve_dir / "server.log").read_text().splitlines()[49] == FATAL
    assert serve["server_exit_code_before_stop"] is None  # the double was still up when the wait stopped
    assert (serve["smoke"], serve["bench"]) == (None, None)
    said = [line for line in (serve_dir / "step.log").read_text().splitlines() if line.startswith("serve: ")][1:]
    assert said[:3] == ["serve: loading weights (server.log:21)", "serve: autotuning (server.log:49)",
                        f"serve: fatal line, stopped waiting: server.log:50: {FATAL}"]
    assert len(said) == 4 and said[3].startswith("serve: fatal after ")
    triage = json.loads((run_dir / "steps" / "triage" / "result.json").read_text())
    assert triage["verdict"] == "FATAL"
    assert proc.returncode == ExitCode.FAIL, proc.stdout
