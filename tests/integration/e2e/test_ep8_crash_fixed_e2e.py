"""ep8-crash and ep8-crash-fixed end to end against the serve double, then `invoke compare` of the two runs.

The fixed kit passes sglang 0.5.9 the flag `invoke fix --kit ep8-crash` derives (--disable-flashinfer-autotune);
the double honours it as sglang does (no FlashInfer autotune block in its log, so no tactic is tried) and refuses
any flag 0.5.9 lacks. Real SSH, Docker, workloads, triage, judge, report and compare; only the server is a double.
"""

from __future__ import annotations

import json

import pytest

from reprokit.errors import ExitCode
from tests.conftest import run_invoke
from tests.integration.e2e.test_ep8_crash_e2e import host_with_model, serve_double  # noqa: F401 - a fixture
from tests.integration.remote.test_remote_docker import BASE
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

pytestmark = pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")


@pytest.fixture(scope="module")
def failing_and_fixed(tmp_path_factory, serve_double):  # noqa: F811 - the imported fixture
    tmp = tmp_path_factory.mktemp("fixed")
    _, inventory, known = host_with_model(tmp, "fixed")
    runs = {}
    for kit in ("ep8-crash", "ep8-crash-fixed"):
        before = set(runs_in(tmp / "runs"))
        proc = invoke_repro(tmp, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                            "--image", f"serve={serve_double}", "--json", "--quiet", kit=kit)
        (run_dir,) = set(runs_in(tmp / "runs")) - before
        runs[kit] = (proc, run_dir)
    return tmp, runs


def result(run_dir, step: str) -> dict:
    return json.loads((run_dir / "steps" / step / "result.json").read_text())


def test_the_fixed_variant_serves_without_autotune_failures_and_answers_right(failing_and_fixed) -> None:
    _, runs = failing_and_fixed
    proc, run_dir = runs["ep8-crash-fixed"]
    verdict = json.loads((run_dir / "verdict.json").read_text())
    status = {e["name"]: e["status"] for e in verdict["expectations"]}
    assert proc.returncode == ExitCode.INCONCLUSIVE, verdict  # no nvcc in the test container: static-smem cannot say
    serve = result(run_dir, "serve")
    assert serve["command"][-1] == "--disable-flashinfer-autotune"
    assert (serve["ready"], serve["outcome"]) == (True, "ready")
    assert (serve["answers"]["checked"], serve["answers"]["ok"], serve["answers"]["right"], serve["answers"]["total"]) == (
        True, True, 3, 3)
    log = (run_dir / "steps" / "serve" / "server.log").read_text()
    assert "Running FlashInfer autotune" not in log and "Skipping tactic" not in log
    triage = result(run_dir, "triage")
    assert (triage["verdict"], triage["autotune_failure_tiles"], triage["autotune_failures"]) == ("READY", [], [])
    assert {k: status[k] for k in ("server-came-up", "answers-correct", "served-not-answering-wrong",
                                   "autotuning-skipped", "no-autotune-failures", "no-failing-tiles")} == dict.fromkeys(
        ("server-came-up", "answers-correct", "served-not-answering-wrong", "autotuning-skipped",
         "no-autotune-failures", "no-failing-tiles"), "PASS")
    assert (status["sm120-optin-limit"], status["big-tiles-overflow-sm120"]) == ("PASS", "INCONCLUSIVE")  # the double's sm120


def test_compare_shows_what_the_fix_changed(failing_and_fixed) -> None:
    tmp, runs = failing_and_fixed
    (proc_a, run_a), (_, run_b) = runs["ep8-crash"], runs["ep8-crash-fixed"]
    assert proc_a.returncode == ExitCode.INCONCLUSIVE, proc_a.stderr
    assert result(run_a, "serve")["answers"]["ok"] is True  # the failing run answers too: its failures are non-fatal
    done = run_invoke("compare", str(run_a), str(run_b), "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    assert diff["triage"]["verdict"] == {"a": "READY_WITH_NONFATAL_AUTOTUNE_FAILURES", "b": "READY", "changed": True}
    assert diff["triage"]["failures"] == {"a": 32, "b": 0, "delta": -32}  # gemm2 14 and 15, 8 ranks, 2 profiles
    assert {t: v["delta"] for t, v in diff["triage"]["failures_by_tile"].items()} == {
        "128x256x128": -16, "256x128x128": -16}
    assert [f["concurrency"] for f in diff["serve"]["figures"] if f["figure"] == "output tok/s"] == [1, 8, 32]
    assert diff["serve"]["ready_after_s"]["a"] is not None and diff["serve"]["ready_after_s"]["b"] is not None
    text = run_invoke("compare", str(run_a), str(run_b), timeout=120).stdout
    assert "autotune failures 32 -> 0 (-32)" in text
    (tmp / "compare.md").write_text(text)


def test_ready_but_answering_wrong_is_its_own_outcome(failing_and_fixed, serve_double, tmp_path) -> None:  # noqa: F811
    """The double answers as corrupted tactics do (runs of '!'): up, healthy, and wrong."""
    tmp, _ = failing_and_fixed
    _, inventory, known = host_with_model(tmp_path, "wrong")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                        "--image", f"serve={serve_double}", "--json", "--quiet",
                        "--set", "serve.env={FLASHINFER_LOGGING_LEVEL: debug, REPROKIT_DOUBLE_ANSWERS: degenerate}",
                        kit="ep8-crash-fixed")
    (run_dir,) = runs_in(tmp_path / "runs")
    assert proc.returncode == ExitCode.FAIL, proc.stdout
    serve = result(run_dir, "serve")
    assert (serve["ready"], serve["outcome"]) == (True, "ready_answering_wrong")
    assert (serve["answers"]["ok"], serve["answers"]["right"], serve["answers"]["degenerate"]) == (False, 0, 3)
    assert serve["answers"]["first_wrong"] == "degenerate output: 32 x '!' in a row"
    assert (run_dir / "steps" / "serve" / "answers.log").read_text().splitlines()[0] == (
        "[reprokit answers] 3 of 3 answers wrong: prompt 'The capital of France is': degenerate output: 32 x '!' in a row")
    triage = result(run_dir, "triage")
    assert triage["counts"]["events"]["answers_wrong"] == 3
    status = {e["name"]: e["status"] for e in json.loads((run_dir / "verdict.json").read_text())["expectations"]}
    assert (status["server-came-up"], status["answers-correct"], status["served-not-answering-wrong"]) == (
        "PASS", "FAIL", "FAIL")
