"""ci.yml's kits check and lint job, and fit-table.yml by hand against a package index on 127.0.0.1, executed by act.

The ci job sets up its venv itself, as on a hosted runner (`./dev` from each lock); the test suite job is the suite
itself and is not run from here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from tests.integration.workflows.act import NO_ACT, act
from tests.integration.workflows.conftest import runner_env
from tests.unit.smem.test_fit_table_new import Index

pytestmark = pytest.mark.skipif(NO_ACT is not None, reason=NO_ACT or "")

CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"


def test_ci_kits_check_and_lint_pass_on_a_fresh_runner(checkout, tmp_path):
    run = act(checkout, "push", "ci.yml", tmp_path / "act", runner_env=runner_env(checkout, tmp_path, None),
              event_payload={"ref": "refs/heads/main"}, job="lint")
    lint = run.job("lint")
    assert lint.steps == {CHECKOUT: "success",
                          "Kits check (schema, steps, result paths, images, pins; sglang flags against the pinned wheel)":
                              "success",
                          "Lint (ruff, from the dev lock)": "success"}, run.output[-4000:]
    assert (lint.conclusion, lint.annotations, run.returncode) == ("success", [], 0)
    assert "[dev] setting up .venv from requirements.lock" in lint.log
    assert "[dev] setting up .venv from requirements-dev.lock" in lint.log
    assert "All checks passed!" in lint.log
    assert run.legs("test") == []


@pytest.fixture
def index() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/simple"
    server.shutdown()
    server.server_close()


def test_fit_table_by_hand_fails_with_the_diff_when_the_index_has_a_new_release(checkout, tmp_path, runner_venv,
                                                                                 index):
    env = runner_env(checkout, tmp_path, runner_venv, PIP_INDEX_URL=index, REPROKIT_CACHE=str(tmp_path / "cache"))
    run = act(checkout, "workflow_dispatch", "fit-table.yml", tmp_path / "act", runner_env=env)
    job = run.job("new-releases")
    step = "Analyse the new releases; fail with the diff when a cell changed"
    assert (job.conclusion, job.steps) == ("failure", {CHECKOUT: "success", step: "failure"}), run.output[-4000:]
    assert run.returncode == 1
    # the table has every cell of the real releases (0.6.18's sm90 FP8 and BF16 too, since 2026-12-06): only the
    # post-release the index adds is computed
    cells = ("0.6.99.post1/sm120/nvfp4, 0.6.99.post1/sm121/nvfp4, 0.6.99.post1/sm90/nvfp4, 0.6.99.post1/sm90/fp8,"
             " 0.6.99.post1/sm90/bf16, 0.6.99.post1/sm100/nvfp4")
    assert f"fit-table --new: 3 releases on the index, 6 cells computed: {cells}" in job.log, job.log
    # the page's diff: the post-release the table lacks gets a row in each of its 6 tables (arch x dtype)
    assert len([line for line in job.log if line.startswith("+| 0.6.99.post1 | unreadable:")]) == 6, job.log
