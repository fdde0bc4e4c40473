"""repro.yml by hand (workflow_dispatch with `kit` and `host`), executed by act: every kind of host the inventory
knows, and two dispatches for one host that must never overlap on it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import tests.integration.slurm.conftest as slurm_cluster
from reprokit.config.kit import kit_names
from reprokit.records.models import Word
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.report.headline import WORDS
from tests.integration.remote.conftest import REASON as SSH_REASON
from tests.integration.remote.conftest import fake_python, host_workdir, known_hosts_for, write_inventory
from tests.integration.slurm.conftest import REASON as SLURM_REASON
from tests.integration.workflows.act import NO_ACT, Annotation, act, finish
from tests.integration.workflows.conftest import push, runner_env, uploaded_record

pytestmark = pytest.mark.skipif(bool(NO_ACT or SSH_REASON), reason=NO_ACT or SSH_REASON or "")

# One line per (kit, host) pair: the verdict the run records and the job's conclusion. `cluster` is the Slurm
# cluster's login node (its steps are jobs on the compute nodes), `local` the runner's own machine (no GPU here).
DISPATCHES = [
    ("smem-probe", "cluster", "INCONCLUSIVE", "success"),
    ("smem-probe", "local", "INCONCLUSIVE", "success"),
]


def every_kind_of_host(tmp_path: Path, tag: str) -> tuple[Path, Path]:
    """An inventory with the Slurm login node `cluster` (and `local`, built in), and its known_hosts."""
    inventory = slurm_cluster.inventory(tmp_path / "inventory.yml", slurm_cluster.workdir(tag))
    return inventory, slurm_cluster.known_hosts(tmp_path / "known_hosts")


@pytest.mark.parametrize(("kit", "host", "verdict", "conclusion"), DISPATCHES, ids=[f"{k}-on-{h}" for k, h, *_ in DISPATCHES])
def test_a_dispatch_runs_the_kit_on_the_host_it_names(kit, host, verdict, conclusion, checkout, tmp_path, runner_venv):
    if host == "cluster" and SLURM_REASON:
        pytest.skip(SLURM_REASON)
    inventory, known = every_kind_of_host(tmp_path, f"act-dispatch-{tmp_path.name[-20:]}")
    env = runner_env(checkout, tmp_path, runner_venv, INVOKE_REPROKIT_INVENTORY=str(inventory),
                     INVOKE_REPROKIT_KNOWN_HOSTS=str(known))
    run = act(checkout, "workflow_dispatch", "repro.yml", tmp_path / "act", runner_env=env,
              inputs={"kit": kit, "host": host})
    plan = run.job("plan")
    assert (plan.conclusion, plan.outputs) == ("success", {"kits": json.dumps([kit])}), run.output[-3000:]
    leg = run.job("repro")
    assert (leg.name, leg.matrix, leg.conclusion) == (f"repro/{kit} on {host}", {"kit": kit}, conclusion)
    assert [a.title for a in leg.annotations] == ([f"{kit} on {host}: {verdict}"] if verdict != "PASS" else [])
    assert leg.summary.startswith(f"# {kit} on {host}: {WORDS[Word(verdict)]} ({verdict})\n")
    record = uploaded_record(tmp_path, f"run-record-{kit}-{host}-1-1", f"runs/1-1-{kit}")
    manifest = load_manifest(record).to_json()
    assert (manifest["host"]["name"], manifest["kit"]["name"]) == (host, kit)
    if host == "cluster":
        assert manifest["host"]["launcher"] == "slurm"
        probe = next(step for step in manifest["steps"] if step["name"] == "probe")
        assert probe["status"] == "ok" and probe["launch"]["job_id"]  # a job of the cluster ran the step
    assert json.loads((record / "verdict.json").read_text())["verdict"] == verdict
    assert verify_record(record) == []


def test_two_dispatches_for_one_host_never_overlap_on_it(checkout, tmp_path, runner_venv):
    """act does not queue a concurrency group (GitHub does); the host's lock is what keeps a second run off a busy
    host. The first run's step waits on a file the test creates only after the second dispatch has ended."""
    work = host_workdir("h3", f"act-concurrency-{tmp_path.name[-12:]}")
    release = work / "release"
    python = fake_python(work, f"    n=0; while [ ! -e {release} ] && [ $n -lt 6000 ]; do sleep 0.1; n=$((n+1)); done")
    # the step may wait as long as the second dispatch takes on a loaded machine: its timeout is raised by a commit
    push(checkout, lambda repo: (repo / "kits" / "smem-probe.yml").write_text(
        (repo / "kits" / "smem-probe.yml").read_text().replace("timeout_s: 180", "timeout_s: 900")), "probe: 900 s")
    inventory = write_inventory(tmp_path / "inventory.yml", {"h3": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h3")

    def dispatch(name: str, **kwargs):
        env = runner_env(checkout, tmp_path / name, runner_venv, INVOKE_REPROKIT_INVENTORY=str(inventory),
                         INVOKE_REPROKIT_KNOWN_HOSTS=str(known))
        return act(checkout, "workflow_dispatch", "repro.yml", tmp_path / name / "act", runner_env=env,
                   inputs={"kit": "smem-probe", "host": "h3"}, **kwargs)

    first = dispatch("first", popen=True)
    owner = work / "lock" / "owner.json"
    for _ in range(4000):  # the first run holds the host: its lock names it (bounded wait, not a timed assertion)
        if owner.exists() and owner.stat().st_size:
            break
        assert first.poll() is None, (tmp_path / "first" / "act" / "act.log").read_text()[-3000:]
        time.sleep(0.1)
    holder = json.loads(owner.read_text())["run_id"]
    second = dispatch("second")
    release.touch()
    first_run = finish(first, tmp_path / "first" / "act" / "act.log")

    busy = second.job("repro")
    assert busy.conclusion == "failure"
    assert busy.annotations == [
        Annotation("error", "", "No files were found with the provided path: runs/1-1-smem-probe. No artifacts will be"
                                " uploaded."),  # the upload step's if-no-files-found: error
        Annotation("error", "no run record", "nothing was recorded under runs/1-1-smem-probe: the run stopped before"
                                             " it started (see the Reproduce step's log)")]
    assert any(line.startswith(f"error: host 'h3' is busy: run {holder} (pid ") for line in busy.log), busy.log
    held = first_run.job("repro")
    assert (held.conclusion, [a.title for a in held.annotations]) == ("success", ["smem-probe on h3: INCONCLUSIVE"])
    record = uploaded_record(tmp_path / "first", "run-record-smem-probe-h3-1-1", "runs/1-1-smem-probe")
    assert record.name == holder  # the run that held the host is the one that was recorded, and the only one
    assert not (tmp_path / "second" / "artifacts").exists()
    assert not owner.exists()  # released at the end


def test_a_dispatch_of_an_unknown_kit_fails_the_plan_with_one_line(checkout, tmp_path, runner_venv):
    run = act(checkout, "workflow_dispatch", "repro.yml", tmp_path / "act",
              runner_env=runner_env(checkout, tmp_path, runner_venv), inputs={"kit": "no-such-kit", "host": "local"})
    plan = run.job("plan")
    assert (plan.conclusion, plan.outputs) == ("failure", {})
    known = ", ".join(kit_names(checkout / "kits"))
    assert [line for line in plan.log if line.startswith("error:")] == [
        f"error: kits: unknown kit 'no-such-kit'; known kits: {known}"]
    # GitHub skips a job whose `needs` failed; act instead stops at the matrix, whose fromJSON has no output to read
    assert run.legs("repro") == [] and run.returncode == 1
