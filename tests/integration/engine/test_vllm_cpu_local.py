"""`invoke repro vllm-cpu-moe` on the local host: the real vLLM (CPU build) serves the tiny MoE, PASS."""

from __future__ import annotations

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import verify_record
from tests.conftest import run_invoke
from tests.integration.engine.conftest import (
    MODELS_DIR,
    PASSING,
    REASON,
    local_inventory,
    only_run,
    result,
    serve_settings,
    statuses,
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]



def _line_of(log, text: str) -> int:
    """The line number of ``text`` as the triage counts lines (each tqdm '\\r' redraw is one)."""
    lines = log.read_text().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return next(n for n, line in enumerate(lines, 1) if line == text)


def test_vllm_cpu_moe_passes_on_the_local_host(tmp_path, one_server):
    proc = run_invoke("repro", "vllm-cpu-moe", "--inventory", str(local_inventory(tmp_path)), "--host", "here", "--runs-dir",
                      str(tmp_path / "runs"), "--json", "--quiet", *serve_settings(18441), timeout=600)
    run_dir = only_run(tmp_path / "runs")
    assert proc.returncode == ExitCode.PASS, proc.stdout + proc.stderr
    assert statuses(run_dir) == PASSING
    serve = result(run_dir, "serve")
    assert serve["command"][1:] == ["serve", f"{MODELS_DIR}/tiny-qwen3-moe", "--tensor-parallel-size", "1",
                                    "--max-num-seqs", "16", "--dtype", "bfloat16", "--max-model-len", "512",
                                    "--host", "127.0.0.1", "--port", "18441", "--enforce-eager"]
    assert (serve["outcome"], serve["server_exit_code_before_stop"], serve["answers"]["checked"]) == ("ready", None, False)
    triage = result(run_dir, "triage")
    assert (triage["verdict"], triage["exit_code"], triage["fatal"]) == ("READY", 0, None)
    assert triage["decided_by"]["location"].endswith("/steps/serve/server.log:" + str(_line_of(
        run_dir / "steps" / "serve" / "server.log", "INFO:     Application startup complete.")))
    assert verify_record(run_dir) == []
