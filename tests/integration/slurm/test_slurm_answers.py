"""Slurm's state from its answers, never from its silence (issue #40): faults caused on the real test cluster.

The job tools fail, hang or talk through this test's own wrappers on the login node (``faulty_login``: a second
sshd whose sessions' PATH starts with them), so no other run on the shared cluster meets the fault.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import REPO, run_invoke
from tests.integration.slurm.conftest import fake_python, inventory, scontrol_job, squeue, wait_for_job, workdir
from tests.integration.slurm.test_slurm_faults import RESULT_OK, probe_of

TIMED_OUT = "slurm_load_jobs error: Socket timed out on send/recv operation"


def start(tmp_path: Path, faulty, tag: str, body: str, *args: str, **slurm_vars) -> tuple[subprocess.Popen, Path]:
    work = workdir(tag)
    python = fake_python(work, body)
    inv = inventory(tmp_path / "inv.yml", work, ansible_python_interpreter=str(python), ansible_port=faulty.port,
                    **slurm_vars)
    known = faulty.known_hosts(tmp_path / "known_hosts")
    proc = subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host",
                             "cluster", "--inventory", str(inv), "--known-hosts", str(known), "--runs-dir",
                             str(tmp_path / "runs"), *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    return proc, work


def finish(proc: subprocess.Popen, tmp_path: Path, timeout_s: float = 300) -> tuple[int, dict, str]:
    """The exit code, the run (``run_dir`` as ``--json`` gives it) and what the run said (say lines included)."""
    said, _ = proc.communicate(timeout=timeout_s)
    runs = list((tmp_path / "runs").iterdir()) if (tmp_path / "runs").exists() else []
    return proc.returncode, {"run_dir": str(runs[0])} if len(runs) == 1 else {}, said


def test_a_query_failure_mid_job_is_unknown_not_forgotten_and_the_result_comes_back(tmp_path, faulty_login):
    proc, work = start(tmp_path, faulty_login, "unanswered", f"sleep 25; {RESULT_OK}")
    job = wait_for_job(f"{work}/", timeout_s=90)
    for tool in ("squeue", "sacct", "scontrol"):
        faulty_login.fail(tool, 8)  # a busy controller: every job tool times out for 8 s while the job runs
    code, out, err = finish(proc, tmp_path)
    assert code == ExitCode.FAIL, err  # as the undisturbed run of the double
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.exit_code, probe.launch["job_id"], probe.launch["state"]) == ("ok", 0, job["id"],
                                                                                               "COMPLETED")
    assert " ".join(err.split()).count(f"Slurm does not answer about job {job['id']} ({TIMED_OUT}); its state is unknown, asking again"
                     " for up to 300 s") == 1
    assert (Path(out["run_dir"]) / "steps" / "probe" / "step.log").read_text() == "probe done\n"
    assert load_manifest(out["run_dir"]).status == "complete" and verify_record(out["run_dir"]) == []
    assert squeue(str(work)) == [] and not any((work / "runs").iterdir())


def test_a_hanging_squeue_is_a_silence_of_slurms_not_a_lost_connection(tmp_path, faulty_login):
    proc, work = start(tmp_path, faulty_login, "hanging", f"sleep 20; {RESULT_OK}")
    job = wait_for_job(f"{work}/", timeout_s=90)
    for tool in ("squeue", "sacct", "scontrol"):
        faulty_login.hang(tool, 35)  # past the 30 s I/O timeout: each tool's call is cut off unanswered
    time.sleep(75)  # one poll's three calls, each cut off at 30 s: the poll is unanswered
    faulty_login.heal()  # the calls under way still hang their 35 s
    code, out, err = finish(proc, tmp_path)
    assert code == ExitCode.FAIL, err
    assert (probe_of(out["run_dir"]).status, probe_of(out["run_dir"]).launch["state"]) == ("ok", "COMPLETED")
    assert "connection to cluster lost" not in err, err
    assert " ".join(err.split()).count(f"Slurm does not answer about job {job['id']} (`scontrol` gave no answer within"
                                       " 30 s); its state is unknown, asking again for up to 300 s") == 1, err


def test_a_line_after_sbatch_s_job_id_is_not_a_refusal(tmp_path, faulty_login):
    faulty_login.after("sbatch", "echo 'NOTICE: scheduled maintenance on Sunday 06:00 UTC'\n")
    proc, work = start(tmp_path, faulty_login, "sbatch-noise", RESULT_OK)
    code, out, err = finish(proc, tmp_path)
    assert code == ExitCode.FAIL, err
    probe = probe_of(out["run_dir"])
    assert (probe.status, probe.launch["state"]) == ("ok", "COMPLETED") and probe.launch["job_id"].isdigit()
    assert squeue(str(work)) == []


def test_sigterm_during_a_slow_submit_cancels_the_job_it_submitted(tmp_path, faulty_login):
    faulty_login.after("sbatch", "sleep 15\n")  # the job is in the queue; sbatch has not answered yet
    proc, work = start(tmp_path, faulty_login, "slow-sbatch", f"sleep 300; {RESULT_OK}")
    job = wait_for_job(f"{work}/", timeout_s=90)
    proc.send_signal(signal.SIGTERM)
    code, out, err = finish(proc, tmp_path)
    assert code == ExitCode.INTERRUPTED, err
    assert squeue(str(work)) == []
    assert scontrol_job(job["id"])["JobState"] == "CANCELLED"


def test_a_child_in_a_session_of_its_own_does_not_outlive_its_job(tmp_path, faulty_login):
    body = ('setsid sh -c \'echo $$ > "$0"; exec sleep 300\' "$(dirname "$PWD")/../../child.pid" < /dev/null'
            ' > /dev/null 2>&1 & sleep 1; ' + RESULT_OK)
    proc, work = start(tmp_path, faulty_login, "setsid-child", body)
    code, out, err = finish(proc, tmp_path)
    assert code == ExitCode.FAIL, err
    pid = int((work / "child.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert load_manifest(out["run_dir"]).status == "complete"


def test_collect_refuses_a_record_whose_job_id_names_another_run_s_job(tmp_path, faulty_login):
    proc, work = start(tmp_path, faulty_login, "foreign-job", f"sleep 30; {RESULT_OK}")
    ours = wait_for_job(f"{work}/", timeout_s=90)
    proc.kill()
    proc.communicate()
    other = subprocess.run(["sbatch", "--parsable", "--job-name=someone-elses", "-p", "debug", "-o", "/dev/null",
                            "--chdir=/tmp", "--wrap", "sleep 120"], capture_output=True, text=True, check=True)
    other_id = other.stdout.strip().split(";")[0]
    try:
        run_dir = next((tmp_path / "runs").iterdir())
        manifest_path = run_dir / "manifest.json"
        record = json.loads(manifest_path.read_text())
        record["in_flight"]["handle"]["id"] = other_id  # an edited record, or a job id Slurm gave out again
        manifest_path.write_text(json.dumps(record, indent=2))
        done = run_invoke("collect", str(run_dir), "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                          str(tmp_path / "known_hosts"), "--json", timeout=120)
        remote = work / "runs" / record["run_id"] / "probe"
        assert done.returncode == ExitCode.HOST_ERROR, done.stderr
        assert (f"Slurm job {other_id} is not this run's: it is named 'someone-elses', the step's job is"
                f" '{record['run_id']}-probe'; nothing was cancelled or removed") in done.stderr
        assert remote.is_dir() and [j["id"] for j in squeue(str(work))] == [ours["id"]]
    finally:
        subprocess.run(["scancel", other_id, ours["id"]], check=False)


def test_a_parked_partition_with_default_settings_says_pending_and_its_reason(tmp_path, faulty_login):
    proc, work = start(tmp_path, faulty_login, "parked-default", RESULT_OK, slurm_partition="parked")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not any("is PENDING (reason: PartitionDown)" in line for line in lines):
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    reader.join(10)
    said = [line.strip() for line in lines if "is PENDING" in line]
    assert len(said) == 1 and said[0].endswith("is PENDING (reason: PartitionDown); waiting up to 3600 s"
                                               " (slurm_max_queue_wait_s)"), lines
    assert proc.returncode == ExitCode.INTERRUPTED
    assert squeue(str(work)) == []


def test_sbatch_s_own_words_reach_the_final_error_line_escaped(tmp_path, faulty_login):
    """Issue #40: host bytes reached the terminal raw through the final `error:` line (sbatch's stderr)."""
    faulty_login.instead("sbatch", "printf 'sbatch: error: \\033]0;pwned\\007Batch job submission failed\\n' >&2; exit 1\n")
    proc, work = start(tmp_path, faulty_login, "sbatch-escape", RESULT_OK)
    code, _, said = finish(proc, tmp_path)
    assert "\x1b" not in said and "\x07" not in said
    assert code == ExitCode.HOST_ERROR, said
    assert said.strip().splitlines()[-1] == (
        "error: host 'cluster': sbatch refused step 'fingerprint': sbatch: error: \\x1b]0;pwned\\x07Batch job submission"
        " failed; check the slurm_* variables of cluster in the inventory (" + str(tmp_path / "inv.yml") + ":8)")
