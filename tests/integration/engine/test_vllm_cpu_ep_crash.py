"""The expert-parallel crash of vLLM's CPU build, reproduced end to end by `vllm-cpu-ep-crash` on the local host,
and its fixed variant (no expert parallelism) passing. The crash is fast: the server is up in ~40 s and the first
request kills a worker."""

from __future__ import annotations

import json
import re
import shlex
from html import escape

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import verify_record
from tests.conftest import run_invoke
from tests.integration.engine.conftest import MODELS_DIR, REASON, local_inventory, only_run, result, serve_settings, statuses

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

DEATH = r"Worker proc VllmWorker-[01] died unexpectedly \(exit code: (-11|None)\), shutting down executor\."
FRAME = '  File "/tmp/vllm/csrc/cpu/cpu_fused_moe.cpp", line 242, in fused_moe_impl'  # torch's handler, vllm-cpu 0.32.0


def repro(tmp_path, kit: str, port: int):
    proc = run_invoke("repro", kit, "--inventory", str(local_inventory(tmp_path)), "--host", "here", "--runs-dir",
                      str(tmp_path / "runs"), "--json", "--quiet", *serve_settings(port), timeout=600)
    return proc, only_run(tmp_path / "runs")


def test_expert_parallel_crash_ends_fail_with_the_workers_death(tmp_path, one_server):
    proc, run_dir = repro(tmp_path, "vllm-cpu-ep-crash", 18442)
    assert proc.returncode == ExitCode.FAIL, proc.stdout + proc.stderr
    assert statuses(run_dir) == {"server-came-up": "PASS", "first-request-answered": "FAIL",
                                 "server-alive-until-stopped": "FAIL", "crash-not-reproduced": "FAIL"}
    serve = result(run_dir, "serve")
    assert serve["command"][1:] == ["serve", f"{MODELS_DIR}/tiny-qwen3-moe", "--tensor-parallel-size", "2",
                                    "--max-num-seqs", "16", "--dtype", "bfloat16", "--max-model-len", "512",
                                    "--host", "127.0.0.1", "--port", "18442", "--enforce-eager",
                                    "--enable-expert-parallel"]
    assert (serve["ready"], serve["smoke"]["http_status"], serve["stopped_by_reprokit"], serve["bench"]) == (
        True, 500, False, None)  # died under the smoke request: no benchmark against a dead server
    text = (run_dir / "steps" / "serve" / "server.log").read_text()
    assert "Local/global number of experts: 4/8" in text
    dump = serve["crash_dump"]["lines"]
    # the two workers' handlers print one after the other, or both banners at once and their frames interleaved
    banners = [line for line in dump if line == "!!!!!!! Segfault encountered !!!!!!!"]
    assert (dump[:len(banners)], dump[len(banners) + 1][:len(FRAME)]) == (banners, FRAME) and banners
    triage = result(run_dir, "triage")
    assert (triage["verdict"], triage["exit_code"], triage["fatal"]["kind"]) == ("FATAL", 11, "vllm_child_died")
    # which worker the executor sees die first, and whether its exit code is known yet, is a race in vLLM
    assert re.fullmatch(DEATH, triage["evidence"]["text"]), triage["evidence"]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as the triage counts them
    death_line = next(n for n, line in enumerate(lines, 1) if line.endswith(triage["evidence"]["text"]))
    assert triage["evidence"]["location"] == f"{run_dir}/steps/serve/server.log:{death_line}"
    assert triage["versions"]["vllm"] == "0.32.0"
    # the HTML report and the upstream report carry the stack, the versions and the exact command
    html = (run_dir / "report.html").read_text()
    assert escape(FRAME) in html and "--enable-expert-parallel" in html and triage["evidence"]["text"] in html
    upstream = run_invoke("report", str(run_dir), "--upstream", timeout=120)
    assert upstream.returncode == 0, upstream.stderr
    report = upstream.stdout
    assert report.startswith(f"# [vllm 0.32.0] vllm_child_died: {triage['evidence']['text']}\n")
    assert FRAME in report
    assert "- pins: vllm-cpu 0.32.0, torch 2.13.0+cpu" in report
    assert (f"HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=1 VLLM_CPU_OMP_THREADS_BIND='0|1' {shlex.join(serve['command'])}"
            in report.splitlines())
    assert verify_record(run_dir) == []


def test_without_expert_parallelism_the_same_server_passes(tmp_path, one_server):
    proc, run_dir = repro(tmp_path, "vllm-cpu-ep-crash-fixed", 18443)
    assert proc.returncode == ExitCode.PASS, proc.stdout + proc.stderr
    assert statuses(run_dir) == dict.fromkeys(("server-came-up", "first-request-answered", "every-benchmark-request-ok",
                                               "server-alive-until-stopped", "triage-ready"), "PASS")
    assert "--enable-expert-parallel" not in result(run_dir, "serve")["command"]
    assert json.loads((run_dir / "verdict.json").read_text())["verdict"] == "PASS"
