"""`status`, `logs -f` and `cancel` of a run on a real SSH test host, through the session launcher."""

from __future__ import annotations

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest
from tests.integration.operate_scenario import operate_a_hanging_run
from tests.integration.remote.conftest import alive, fake_python, host_workdir, known_hosts_for, write_inventory


def test_status_logs_follow_and_cancel_a_run_on_an_ssh_host(tmp_path):
    work = host_workdir("h3", "operate")
    python = fake_python(work, f'    echo $$ > {work}/hang.pid; echo "probe started"; sleep 300 & wait')
    inventory = write_inventory(tmp_path / "inv.yml", {"h3": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h3")
    pidfile = work / "hang.pid"

    def started() -> bool:
        return pidfile.exists() and pidfile.read_text().strip() != "" and any(
            "probe started" in p.read_text() for p in (work / "runs").glob("*/probe/step.log"))

    row, collect = operate_a_hanging_run(tmp_path, inventory, known, "h3", started)
    run_id = row["run_id"]
    assert (row["status"], row["host"], row["step"], row["launcher"], row["state"]) == (
        "running", "h3", "probe", "session", "running")
    assert row["job_id"].isdigit()  # the session's leader on the host
    assert not alive(int(pidfile.read_text()))  # cancel ended the workload on the host
    assert collect.returncode == ExitCode.STEP_ERROR, collect.stderr  # the stopped probe: exit 130, no result
    manifest = load_manifest(tmp_path / "runs" / run_id)
    assert manifest.status == "complete"
    assert not (work / "lock").exists() and list((work / "runs").iterdir()) == []
