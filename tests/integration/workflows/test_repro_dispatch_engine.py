"""repro.yml by hand for the real-engine kit: act dispatches `vllm-cpu-moe` on a host whose vLLM is on the runner's
PATH (a real host has it there), and the leg ends PASS with the served model's record uploaded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reprokit.records.run_dir import load_manifest, verify_record
from tests.integration.engine.conftest import PASSING, VLLM, local_inventory, one_server, statuses  # noqa: F401 (a fixture)
from tests.integration.engine.conftest import REASON as ENGINE_REASON
from tests.integration.workflows.act import NO_ACT, act
from tests.integration.workflows.conftest import runner_env, uploaded_record

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(NO_ACT or ENGINE_REASON), reason=NO_ACT or ENGINE_REASON or "")]


@pytest.mark.usefixtures("one_server")  # the machine's one vLLM server slot
def test_a_dispatch_serves_the_real_engine_and_passes(checkout, tmp_path, runner_venv):
    inventory = local_inventory(tmp_path)  # this machine as the host `here`, its models_dir the engine's cache
    path = f"{Path(VLLM).parent}:{os.environ['PATH']}"  # the runner's .env puts the engine's vllm first on the PATH
    env = runner_env(checkout, tmp_path, runner_venv, INVOKE_REPROKIT_INVENTORY=str(inventory), PATH=path)
    run = act(checkout, "workflow_dispatch", "repro.yml", tmp_path / "act", runner_env=env,
              inputs={"kit": "vllm-cpu-moe", "host": "here"})
    leg = run.job("repro")
    assert (leg.name, leg.conclusion, leg.annotations) == ("repro/vllm-cpu-moe on here", "success", []), run.output[-3000:]
    assert leg.summary.startswith("# vllm-cpu-moe on here: healthy (PASS)\n")  # its expectations describe health
    record = uploaded_record(tmp_path, "run-record-vllm-cpu-moe-here-1-1", "runs/1-1-vllm-cpu-moe")
    assert (load_manifest(record).to_json()["host"]["name"], statuses(record)) == ("here", PASSING)
    assert json.loads((record / "verdict.json").read_text())["verdict"] == "PASS"
    assert verify_record(record) == []
