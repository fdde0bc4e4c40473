"""`invoke collect --prune`: the host's copy kept for entries that could not be pulled goes when the operator says.

Real test host, real CLI: a step leaves a FIFO (never pulled), the run completes and keeps its host copy; prune
removes it and records when; a second prune, and a prune of a run still to collect, are one line each, exit 2.
"""

from __future__ import annotations

from reprokit.errors import ExitCode
from reprokit.records.models import LeftOnHost
from reprokit.records.run_dir import load_manifest
from tests.conftest import run_invoke
from tests.integration.hostile.conftest import RESULT_OK, step


def prune(rig, run_id: str):
    return run_invoke("collect", run_id, "--prune", "--inventory", str(rig.tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs))


def test_prune_removes_the_host_copy_kept_for_not_pulled_entries(rig):
    outcome, manifest, _ = rig.run("mkfifo pipe; " + RESULT_OK)
    assert manifest["status"] == "complete"
    assert step(manifest)["not_pulled"] == [{"path": "pipe", "reason": "not a regular file (fifo)"}]
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "pipe").exists()

    proc = prune(rig, outcome.run_dir.name)
    assert proc.returncode == ExitCode.PASS, proc.stderr
    assert "pruned from h2: 'probe/pipe' (not pulled; gone from the host)" in proc.stdout + proc.stderr
    assert rig.remote_runs() == []
    pruned = load_manifest(outcome.run_dir).host_pruned
    assert pruned and pruned.endswith(f": removed {remote_run} on h2 with 1 entries not pulled")
    assert load_manifest(outcome.run_dir).step("probe").not_pulled == [LeftOnHost("pipe", "not a regular file (fifo)")]

    again = prune(rig, outcome.run_dir.name)
    assert again.returncode == ExitCode.BAD_INPUT
    lines = [line for line in again.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith(f"the host's copy was already removed ({pruned})"), again.stderr


def test_prune_of_a_run_without_not_pulled_entries_is_one_line(rig):
    outcome, manifest, _ = rig.run(RESULT_OK)
    assert manifest["status"] == "complete" and rig.remote_runs() == []
    proc = prune(rig, outcome.run_dir.name)
    assert proc.returncode == ExitCode.BAD_INPUT
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith("the record lists no entries left on the host; nothing to prune"), proc.stderr


def test_prune_of_a_run_still_to_collect_is_refused_and_the_host_keeps_it(rig):
    body = "head -c 300000 /dev/urandom > big.bin; " + RESULT_OK
    outcome, manifest, _ = rig.run(body, options=rig.options(max_pull_bytes=200000))
    assert manifest["status"] == "incomplete"
    proc = prune(rig, outcome.run_dir.name)
    assert proc.returncode == ExitCode.BAD_INPUT
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith(f"run is 'incomplete'; `invoke collect {outcome.run_dir.name}` first,"
                                                 " then --prune removes what it could not pull"), proc.stderr
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "big.bin").stat().st_size == 300000
