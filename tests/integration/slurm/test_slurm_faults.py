"""Faults really caused on the real Slurm, each ending in its stated outcome, and nothing lost (`invoke collect`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import REPO, run_invoke
from tests.integration.slurm.conftest import (
    STATE,
    fake_python,
    inventory,
    known_hosts,
    resume_nodes,
    scontrol_job,
    squeue,
    wait_for_job,
    workdir,
)

RESULT_OK = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
             ' echo "probe done"; exit 0')


def start(tmp_path: Path, inv: Path, *args: str) -> subprocess.Popen:
    known = known_hosts(tmp_path / "known_hosts")
    return subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host",
                             "cluster", "--inventory", str(inv), "--known-hosts", str(known), "--runs-dir",
                             str(tmp_path / "runs"), "--json", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout_s: float = 300) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=timeout_s)
    return proc.returncode, json.loads(out) if out.strip() else {}, err


def slow_cluster(tmp_path: Path, tag: str, sleep_s: int = 25, **slurm_vars) -> tuple[Path, Path]:
    work = workdir(tag)
    python = fake_python(work, f"sleep {sleep_s}; {RESULT_OK}")
    inv = inventory(tmp_path / "inv.yml", work, ansible_python_interpreter=str(python), **slurm_vars)
    return inv, work


def probe_of(run_dir: str):
    return next(s for s in load_manifest(run_dir).steps if s.name == "probe")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_cancel_the_job_and_leave_none_in_squeue(tmp_path, sig):
    inv, work = slow_cluster(tmp_path, f"stop-{sig.name}", sleep_s=300)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    proc.send_signal(sig)
    code, out, err = finish(proc)
    assert code == ExitCode.INTERRUPTED, err
    assert squeue(str(work)) == []
    assert scontrol_job(job["id"])["JobState"] == "CANCELLED"
    run_dir = next((tmp_path / "runs").iterdir())
    assert load_manifest(run_dir).status == "interrupted"


def test_a_time_limit_hit_is_a_timeout_with_slurms_reason(tmp_path):
    inv, work = slow_cluster(tmp_path, "time-limit", sleep_s=300, slurm_time_limit="1")
    code, out, err = finish(start(tmp_path, inv), timeout_s=400)
    assert code == ExitCode.STEP_ERROR, err
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.exit_code, probe.launch["state"]) == ("timeout", None, "TIMEOUT")
    assert probe.reason == (f"Slurm job {probe.launch['job_id']} ended TIMEOUT: Slurm ended it at its time limit"
                            " (00:01:00)")
    assert squeue(str(work)) == [] and verify_record(out["run_dir"]) == []


def test_scancel_by_another_user_is_said_as_a_cancel_outside_reprokit(tmp_path):
    inv, work = slow_cluster(tmp_path, "scancel", sleep_s=300)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    subprocess.run(["scancel", job["id"]], check=True)  # root: the cluster's admin, not the run's user
    code, out, err = finish(proc)
    assert code == ExitCode.STEP_ERROR, err
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.launch["state"], probe.launch["job_id"]) == ("error", "CANCELLED", job["id"])
    assert probe.reason == (f"Slurm job {job['id']} ended CANCELLED: it was cancelled outside reprokit (an admin, the"
                            " owner in another shell, or the scheduler)")


def test_a_node_set_down_mid_job_is_a_node_failure(tmp_path):
    inv, work = slow_cluster(tmp_path, "node-down", sleep_s=300)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    try:
        subprocess.run(["scontrol", "update", f"nodename={job['nodes']}", "state=down", "reason=reprokit-test"], check=True)
        code, out, err = finish(proc)
    finally:
        resume_nodes()
    assert code == ExitCode.STEP_ERROR, err
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.launch["state"], probe.launch["nodes"]) == ("error", "NODE_FAIL", job["nodes"])
    assert probe.reason == (f"Slurm job {job['id']} ended NODE_FAIL: its node {job['nodes']} failed or was set DOWN"
                            " while it ran")


def test_a_requeued_job_runs_again_and_the_record_counts_the_restart(tmp_path):
    inv, work = slow_cluster(tmp_path, "requeue", sleep_s=20, slurm_requeue=True)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    time.sleep(2)
    subprocess.run(["scontrol", "requeue", job["id"]], check=True)
    code, out, err = finish(proc, timeout_s=500)
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.exit_code, probe.launch["state"], probe.launch["restarts"]) == ("ok", 0, "COMPLETED", 1)
    assert code == ExitCode.FAIL, err  # the double's result: a GPU check with no devices does not hold
    assert (Path(out["run_dir"]) / "steps" / "probe" / "step.log").read_text() == "probe done\n"  # the second run's


def test_a_partition_that_never_schedules_ends_at_the_queue_wait(tmp_path):
    inv, work = slow_cluster(tmp_path, "parked", slurm_partition="parked", slurm_max_queue_wait_s=5)
    code, out, err = finish(start(tmp_path, inv))
    assert code == ExitCode.STEP_ERROR, err
    manifest = load_manifest(out["run_dir"])
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.launch["state"], probe.launch["cancelled_by"]) == ("error", "PENDING",
                                                                                     "reprokit (queue wait)")
    assert probe.reason.startswith(f"Slurm job {probe.launch['job_id']} was still PENDING after ")
    assert probe.reason.endswith(" s (reason: PartitionDown), past slurm_max_queue_wait_s 5; it was cancelled")
    assert "past slurm_max_queue_wait_s 5" in manifest.fingerprint.gpu_reason
    assert squeue(str(work)) == []


def _restart_login_sshd() -> None:
    """Kill every sshd of the login node (the master and each connection's) and start it again, same config."""
    pids = subprocess.run(["ip", "netns", "pids", "rk-login"], capture_output=True, text=True, check=True).stdout.split()
    sshd = [p for p in pids if Path(f"/proc/{p}/comm").exists() and Path(f"/proc/{p}/comm").read_text().strip() == "sshd"]
    subprocess.run(["kill", *sshd], check=True)
    time.sleep(1)
    login = STATE / "login"
    subprocess.run(["ip", "netns", "exec", "rk-login", "/usr/sbin/sshd", "-f", str(login / "sshd_config"), "-E",
                    str(login / "sshd.log")], check=True)


def test_the_login_sshd_restarted_mid_job_is_reconnected_and_the_run_completes(tmp_path):
    inv, work = slow_cluster(tmp_path, "sshd-restart", sleep_s=20)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    log = STATE / "login" / "sshd.log"
    before = log.stat().st_size
    _restart_login_sshd()
    code, out, err = finish(proc)
    assert code == ExitCode.FAIL, err  # as the undisturbed run of the double (the requeue test)
    with open(log, "rb") as fh:  # the run logged in again to the restarted sshd
        fh.seek(before)
        after = fh.read().decode(errors="replace")
    assert "Server listening on 10.213.0.20 port 22" in after and "Accepted publickey for rkuser" in after
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.launch["job_id"], probe.launch["state"]) == ("ok", job["id"], "COMPLETED")
    assert load_manifest(out["run_dir"]).status == "complete" and verify_record(out["run_dir"]) == []


def test_a_killed_control_process_leaves_the_job_and_collect_finishes_it(tmp_path):
    inv, work = slow_cluster(tmp_path, "collect", sleep_s=20)
    proc = start(tmp_path, inv)
    job = wait_for_job(f"{work}/", timeout_s=90)
    proc.kill()
    proc.communicate()
    run_dir = next((tmp_path / "runs").iterdir())
    manifest = load_manifest(run_dir)
    assert manifest.in_flight.handle == {"launcher": "slurm", "id": job["id"], "remote_dir": f"{work}/runs/{manifest.run_id}/probe"}
    assert [j["id"] for j in squeue(str(work))] == [job["id"]]  # the job goes on without the control process
    known = tmp_path / "known_hosts"
    done = run_invoke("collect", str(run_dir), "--inventory", str(inv), "--known-hosts", str(known), "--json",
                      timeout=300)
    assert done.returncode == ExitCode.FAIL, done.stderr  # as the undisturbed run of the double
    probe = probe_of(str(run_dir))
    assert (probe.status, probe.collected, probe.launch["job_id"], probe.launch["state"]) == ("ok", True, job["id"],
                                                                                               "COMPLETED")
    assert load_manifest(run_dir).status == "complete" and verify_record(run_dir) == []
    assert not (work / "runs" / manifest.run_id).exists()  # the login node's copy goes once all is back
