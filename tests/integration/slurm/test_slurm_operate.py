"""`status`, `logs -f` and `cancel` of a run on the real Slurm test cluster: the job found, followed and cancelled."""

from __future__ import annotations

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest
from tests.integration.operate_scenario import operate_a_hanging_run
from tests.integration.slurm.conftest import fake_python, inventory, known_hosts, squeue, workdir


def test_status_logs_follow_and_cancel_a_slurm_job(tmp_path):
    work = workdir("operate")
    python = fake_python(work, 'echo "probe started"; sleep 300')
    inv = inventory(tmp_path / "inv.yml", work, ansible_python_interpreter=str(python))
    known = known_hosts(tmp_path / "known_hosts")
    jobs: list[dict[str, str]] = []

    def started() -> bool:
        jobs[:] = [j for j in squeue(f"{work}/") if j["state"] == "RUNNING" and j["name"].endswith("-probe")]
        return bool(jobs) and any("probe started" in p.read_text() for p in (work / "runs").glob("*/probe/step.log"))

    row, collect = operate_a_hanging_run(tmp_path, inv, known, "cluster", started)
    assert (row["status"], row["host"], row["step"], row["launcher"], row["job_id"], row["state"]) == (
        "running", "cluster", "probe", "slurm", jobs[0]["id"], "running")
    assert squeue(f"{work}/") == []  # cancel ended the job
    assert collect.returncode == ExitCode.STEP_ERROR, collect.stderr
    manifest = load_manifest(tmp_path / "runs" / row["run_id"])
    assert manifest.status == "complete"
    assert list((work / "runs").iterdir()) == []
