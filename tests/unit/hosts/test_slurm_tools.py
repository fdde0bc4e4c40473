"""What Slurm prints, read as the launcher reads it; the sbatch line the inventory's slurm_* variables make.

The scontrol lines are verbatim from the test cluster (tests/services/up.d/40-slurm.sh: Debian 12's slurm-wlm
22.05.8, no accounting): a job that hit its time limit and one whose node was set DOWN (tests/integration/slurm).
"""

from __future__ import annotations

import pytest

from reprokit.config.inventory import SlurmSettings
from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.launchers.slurm_tools import job_end, parse_job_id, parse_sacct, parse_scontrol, parse_squeue, sbatch_argv

TIMEOUT_LINE = "JobId=36 JobName=20261201T233545Z-smem-probe-cluster-bb6c-probe UserId=rkuser(1001) GroupId=rkuser(1001) MCS_label=N/A Priority=4294901724 Nice=0 Account=(null) QOS=(null) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:03:11 TimeLimit=00:03:00 TimeMin=N/A SubmitTime=2026-12-01T23:35:47 EligibleTime=2026-12-01T23:35:47 AccrueTime=2026-12-01T23:35:47 StartTime=2026-12-01T23:35:49 EndTime=2026-12-01T23:39:00 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T23:35:49 Scheduler=Main Partition=debug AllocNode:Sid=localhost:30605 ReqNodeList=(null) ExcNodeList=(null) NodeList=c1 BatchHost=c1 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/srv/rk-hosts/login/scancel/runs/20261201T233545Z-smem-probe-cluster-bb6c/probe/job.sh WorkDir=/srv/rk-hosts/login/scancel/runs/20261201T233545Z-smem-probe-cluster-bb6c/probe StdErr=/srv/rk-hosts/login/scancel/runs/20261201T233545Z-smem-probe-cluster-bb6c/probe/slurm.out StdIn=/dev/null StdOut=/srv/rk-hosts/login/scancel/runs/20261201T233545Z-smem-probe-cluster-bb6c/probe/slurm.out Power= TresPerNode=gres:gpu:1 "
NODE_FAIL_LINE = "JobId=40 JobName=20261201T233927Z-smem-probe-cluster-c5e6-probe UserId=rkuser(1001) GroupId=rkuser(1001) MCS_label=N/A Priority=4294901720 Nice=0 Account=(null) QOS=(null) JobState=NODE_FAIL Reason=NodeDown Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:00:00 TimeLimit=00:03:00 TimeMin=N/A SubmitTime=2026-12-01T23:39:28 EligibleTime=2026-12-01T23:39:28 AccrueTime=2026-12-01T23:39:28 StartTime=2026-12-01T23:39:31 EndTime=2026-12-01T23:39:31 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T23:39:31 Scheduler=Main Partition=debug AllocNode:Sid=localhost:31512 ReqNodeList=(null) ExcNodeList=(null) NodeList=c1 BatchHost=c1 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/srv/rk-hosts/login/node-down/runs/20261201T233927Z-smem-probe-cluster-c5e6/probe/job.sh WorkDir=/srv/rk-hosts/login/node-down/runs/20261201T233927Z-smem-probe-cluster-c5e6/probe StdErr=/srv/rk-hosts/login/node-down/runs/20261201T233927Z-smem-probe-cluster-c5e6/probe/slurm.out StdIn=/dev/null StdOut=/srv/rk-hosts/login/node-down/runs/20261201T233927Z-smem-probe-cluster-c5e6/probe/slurm.out Power= TresPerNode=gres:gpu:1 "
# sacct -n -P -X -o JobID,State,ExitCode,NodeList,Submit,Start,End,Reason,Partition,TimelimitRaw, as its manual
# documents it (this cluster has no accounting: sacct says "Slurm accounting storage is disabled")
SACCT_CANCELLED = ("77|CANCELLED by 0|0:15|gpu-a03|2026-12-01T10:00:00|2026-12-01T10:00:30|2026-12-01T10:05:00|None|gpu|60"
                   "|R1-probe|/scratch/rk/runs/R1/probe\n")


def test_scontrol_of_a_job_at_its_time_limit_is_a_timeout_with_its_facts():
    info = parse_scontrol(TIMEOUT_LINE, "36")
    assert (info.state, info.nodes, info.exit_code, info.signal, info.time_limit) == ("TIMEOUT", "c1", 0, 15, "00:03:00")
    assert info.queue_wait_s() == 2.0
    end = job_end(info, None, cancelled_here=False)
    assert (end.exit_code, end.timed_out) == (None, True)
    assert end.reason == "Slurm job 36 ended TIMEOUT: Slurm ended it at its time limit (00:03:00)"
    assert end.facts == {"launcher": "slurm", "job_id": "36", "state": "TIMEOUT", "nodes": "c1", "partition": "debug",
                         "queue_wait_s": 2.0, "exit_code": 0, "signal": 15, "restarts": 0, "seen_by": "scontrol"}


def test_scontrol_of_a_job_whose_node_went_down_is_a_node_failure():
    end = job_end(parse_scontrol(NODE_FAIL_LINE, "40"), None, cancelled_here=False)
    assert (end.exit_code, end.timed_out) == (None, False)
    assert end.reason == "Slurm job 40 ended NODE_FAIL: its node c1 failed or was set DOWN while it ran"
    assert parse_scontrol(NODE_FAIL_LINE, "41") is None  # another job's line is not this job's


def test_sacct_names_who_cancelled_and_a_cancel_from_here_is_not_someone_elses():
    info = parse_sacct(SACCT_CANCELLED, "77")
    assert (info.state, info.reason, info.time_limit, info.source) == ("CANCELLED", "by uid 0", "60 min", "sacct")
    assert job_end(info, None, cancelled_here=False).reason == (
        "Slurm job 77 ended CANCELLED: it was cancelled outside reprokit by uid 0 (an admin, the owner in another shell,"
        " or the scheduler)")
    assert job_end(info, None, cancelled_here=True).exit_code == 130
    assert parse_sacct("Slurm accounting storage is disabled\n", "77") is None


def test_the_workloads_own_exit_code_wins_over_the_batch_scripts():
    info = parse_scontrol(NODE_FAIL_LINE.replace("JobState=NODE_FAIL", "JobState=FAILED"), "40")
    assert job_end(info, 3, cancelled_here=False).exit_code == 3  # no_driver: a result, not a failure of Slurm's
    assert job_end(info, None, cancelled_here=False).reason == (
        "Slurm job 40 ended FAILED: its batch script failed (exit 0, signal 15) before the workload wrote an exit code")


def test_squeue_and_sbatch_output():
    info = parse_squeue("52|RUNNING|None|c2|2026-12-01T23:44:36|R1-probe|/scratch/a|b/probe\n", "52")
    assert (info.state, info.name, info.workdir) == ("RUNNING", "R1-probe", "/scratch/a|b/probe")
    assert parse_squeue("", "52") is None
    assert [parse_job_id("53\n"), parse_job_id("54;rk\n"), parse_job_id("sbatch: error: x\n")] == ["53", "54", None]


def test_the_job_id_line_is_found_among_a_site_wrappers_lines():
    """Issue #40: a line after the id (a maintenance notice) was read as a refusal, though the job was submitted."""
    assert parse_job_id("55\nNOTICE: maintenance on Sunday 06:00\n") == "55"
    assert parse_job_id("site wrapper v2: submitting\n56;rk\nlast line 57 words\n") == "56"
    assert parse_job_id("Submitted batch job 58\n") is None  # not --parsable's form: not taken for an id


def test_a_job_under_another_name_or_directory_is_not_the_steps():
    """Issue #40: collect trusted a job id that named another run's job."""
    info = parse_sacct(SACCT_CANCELLED, "77")
    assert info.foreign("R1-probe", "/scratch/rk/runs/R1/probe/") is None
    assert info.foreign("R2-probe", "/scratch/rk/runs/R2/probe") == "it is named 'R1-probe', the step's job is 'R2-probe'"
    line = TIMEOUT_LINE.replace("JobName=20261201T233545Z-smem-probe-cluster-bb6c-probe ", "")
    assert parse_scontrol(line, "36").foreign("x-probe", "/elsewhere") == (
        "it works in '/srv/rk-hosts/login/scancel/runs/20261201T233545Z-smem-probe-cluster-bb6c/probe', the step's"
        " directory is '/elsewhere'")


def test_every_slurm_variable_reaches_sbatch_as_one_word():
    settings = SlurmSettings(partition="gpu", account="proj-1", qos="high", reservation="rk", constraint="b200&ib",
                             gres="gpu:4", gpus_per_node=4, extra_args=("--mem=64G", "--exclusive"), node="c2")
    assert sbatch_argv(settings, "R1-probe", "/scratch/rk/runs/R1/probe", 1800) == [
        "sbatch", "--parsable", "--job-name=R1-probe", "--chdir=/scratch/rk/runs/R1/probe", "--output=slurm.out",
        "--nodes=1", "--ntasks=1", "--time=30", "--no-requeue", "--partition=gpu", "--account=proj-1", "--qos=high",
        "--reservation=rk", "--constraint=b200&ib", "--gres=gpu:4", "--gpus-per-node=4", "--nodelist=c2",
        "--mem=64G", "--exclusive", "job.sh"]
    assert sbatch_argv(SlurmSettings(time_limit="1-00:00:00", requeue=True), "j", "/d", 61)[7:9] == [
        "--time=1-00:00:00", "--requeue"]


@pytest.mark.parametrize(("line", "error"), [
    ("slurm_partition: 'gpu;rm -rf /'", "field 'slurm_partition': String should match pattern '^[A-Za-z0-9_.+-]+$'"),
    ("slurm_extra_args: ['--mem 64G']", "field 'slurm_extra_args': '--mem 64G' is not one sbatch option: write each as"
                                        " one item, e.g. --mem=64G"),
    ("slurm_time_limit: soon", "field 'slurm_time_limit': String should match pattern"),
    ("gpu_count: 1\n      launcher: pbs", "field 'launcher': unknown launcher 'pbs'; use one of session, slurm"),
])
def test_a_bad_slurm_variable_is_one_line_naming_its_line(tmp_path, line, error):
    path = tmp_path / "inventory.yml"
    text = line if "launcher" in line else f"launcher: slurm\n      {line}"
    path.write_text(f"all:\n  hosts:\n    cluster:\n      {text}\n")
    with pytest.raises(ConfigError) as exc:
        load_inventory(path)
    assert str(exc.value).startswith(f"{path}:5: host 'cluster': {error}")
