"""The real engine (vLLM's CPU build, tests/services/up.d/50-vllm.sh) serving the tiny seeded MoE, in every placement.

One server at a time on this machine: every test that starts one holds ``one_server`` (a lock beside the engine's
cache, so the test runs of other checkouts on the machine wait too).
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

SERVICES = REPO / ".cache" / "services"
UNAVAILABLE = SERVICES / "vllm.unavailable"
ENV_FILE = SERVICES / "vllm.env"


def _engine() -> tuple[dict[str, str], str | None]:
    if UNAVAILABLE.exists():
        return {}, f"vLLM (CPU) unavailable: {UNAVAILABLE.read_text().strip()}"
    if not ENV_FILE.exists():
        return {}, "vLLM (CPU) is not set up; run tests/services/up.d/50-vllm.sh (./dev test does)"
    env = dict(line.split("=", 1) for line in ENV_FILE.read_text().splitlines() if "=" in line)
    if not Path(env["VLLM_TEST_VENV"], "bin", "vllm").exists():
        return {}, f"{ENV_FILE} names {env['VLLM_TEST_VENV']}, which has no bin/vllm; run tests/services/up.d/50-vllm.sh"
    return env, None


ENGINE, REASON = _engine()
VLLM = str(Path(ENGINE.get("VLLM_TEST_VENV", "/nonexistent"), "bin", "vllm"))
MODELS_DIR = ENGINE.get("VLLM_TEST_MODELS_DIR", "/nonexistent")
VERSION = ENGINE.get("VLLM_TEST_VERSION", "")


# vllm-cpu-moe's expectations, all holding: what every placement must end with
PASSING = dict.fromkeys(("server-came-up", "ready-shown-by-the-log", "smoke-answered", "smoke-answer-is-the-seeded-models",
                         "every-benchmark-request-ok", "benchmark-throughput", "benchmark-ttft", "stopped-by-reprokit",
                         "triage-ready"), "PASS")


@pytest.fixture
def one_server() -> Iterator[None]:
    """The machine's one vLLM server slot, held for the test."""
    lock = Path(ENGINE["VLLM_TEST_VENV"]).parent / "server.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def local_inventory(tmp_path: Path) -> Path:
    """This machine as the inventory host ``here``, its models_dir the engine's cache."""
    path = tmp_path / "inv.yml"
    path.write_text(f"all:\n  hosts:\n    here:\n      ansible_connection: local\n      runtime: native\n"
                    f"      models_dir: {MODELS_DIR}\n      workdir: {tmp_path / 'work'}\n")
    return path


def serve_settings(port: int) -> list[str]:
    """The step's parameters a test host needs: its vLLM (a real host has it on the PATH) and a free port."""
    return ["--set", f"serve.vllm={VLLM}", "--set", f"serve.port={port}"]


def result(run_dir: Path, step: str) -> dict:
    return json.loads((run_dir / "steps" / step / "result.json").read_text())


def statuses(run_dir: Path) -> dict[str, str]:
    return {e["name"]: e["status"] for e in json.loads((run_dir / "verdict.json").read_text())["expectations"]}


def only_run(runs: Path) -> Path:
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return run_dir
