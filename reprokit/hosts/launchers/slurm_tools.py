"""Slurm's job tools as data: the ``sbatch`` command line, what squeue, sacct and scontrol print, what a state means.

No I/O here, so each piece is tested on what Slurm 22.05 (Debian 12) really prints. The tools are the ones every
release since 20.x has: ``squeue -o`` (not ``--only-job-state``, 24.11+), ``sacct -P`` where there is accounting,
``scontrol show job -o`` where there is none (it knows a job for MinJobAge seconds after its end).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reprokit.config.inventory import SlurmSettings
from reprokit.hosts.launch import StepEnd

LIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
               "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD")
SQUEUE_FORMAT = "%i|%T|%r|%N|%V|%j|%Z"  # job id, state, reason, nodes, submit time, name, work dir (last: may hold |)
SACCT_FIELDS = "JobID,State,ExitCode,NodeList,Submit,Start,End,Reason,Partition,TimelimitRaw,JobName,WorkDir"
JOB_ID_LINE = re.compile(r"^([0-9]+)(?:;[A-Za-z0-9_.-]+)?$")  # sbatch --parsable: ID or ID;cluster
NO_SUCH_JOB = "Invalid job id specified"  # what squeue -j and scontrol answer for a job the controller does not know
SLURM_TIME = "%Y-%m-%dT%H:%M:%S"

# what each final state says when the workload did not end by itself (the state's word, then why)
STATE_REASONS = {
    "TIMEOUT": "Slurm ended it at its time limit ({time_limit})",
    "NODE_FAIL": "its node {nodes} failed or was set DOWN while it ran",
    "PREEMPTED": "a higher-priority job preempted it",
    "OUT_OF_MEMORY": "it ran out of its memory allocation; ask for more with slurm_extra_args: [--mem=...]",
    "BOOT_FAIL": "its node {nodes} failed to boot",
    "DEADLINE": "it reached its --deadline",
    "CANCELLED": "it was cancelled outside reprokit{by} (an admin, the owner in another shell, or the scheduler)",
    "FAILED": "its batch script failed (exit {exit_code}, signal {signal}) before the workload wrote an exit code",
}


@dataclass
class JobInfo:
    """One job as squeue, sacct or scontrol tells it."""

    job_id: str
    state: str
    reason: str = ""
    nodes: str = ""
    submit: str = ""
    start: str = ""
    end: str = ""
    exit_code: int | None = None  # Slurm's, of the batch script
    signal: int | None = None
    restarts: int = 0
    partition: str = ""
    time_limit: str = ""
    source: str = ""  # squeue, sacct or scontrol
    name: str = ""  # --job-name: the run's id and the step's name
    workdir: str = ""  # --chdir: the step's directory

    def foreign(self, job_name: str, remote_dir: str) -> str | None:
        """Why this job is not the step's (another run's job under a reused or edited id), or None when it is."""
        if self.name and self.name != job_name:
            return f"it is named {self.name!r}, the step's job is {job_name!r}"
        if self.workdir and self.workdir.rstrip("/") != remote_dir.rstrip("/"):
            return f"it works in {self.workdir!r}, the step's directory is {remote_dir!r}"
        return None

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    def queue_wait_s(self) -> float | None:
        begin, start = _time(self.submit), _time(self.start)
        return max(0.0, (start - begin).total_seconds()) if begin and start and self.state != "PENDING" else None

    def facts(self) -> dict[str, Any]:
        """What the manifest records of the job (``launch`` of the step's entry)."""
        facts = {"launcher": "slurm", "job_id": self.job_id, "state": self.state, "nodes": self.nodes or None,
                 "partition": self.partition or None, "queue_wait_s": self.queue_wait_s(), "exit_code": self.exit_code,
                 "signal": self.signal, "restarts": self.restarts, "seen_by": self.source}
        return {k: v for k, v in facts.items() if v is not None}


def _time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, SLURM_TIME)
    except ValueError:
        return None


def time_limit(settings: SlurmSettings, timeout_s: float) -> str:
    """``--time``: the inventory's slurm_time_limit, or the step's timeout rounded up to whole minutes."""
    return settings.time_limit or str(max(1, math.ceil(timeout_s / 60)))


def sbatch_argv(settings: SlurmSettings, job_name: str, remote_dir: str, timeout_s: float) -> list[str]:
    """The ``sbatch`` command line of one step (its script is ``job.sh`` in ``remote_dir``)."""
    argv = ["sbatch", "--parsable", f"--job-name={job_name}", f"--chdir={remote_dir}", "--output=slurm.out",
            "--nodes=1", "--ntasks=1", f"--time={time_limit(settings, timeout_s)}",
            "--requeue" if settings.requeue else "--no-requeue"]
    for option, value in (("partition", settings.partition), ("account", settings.account), ("qos", settings.qos),
                          ("reservation", settings.reservation), ("constraint", settings.constraint),
                          ("gres", settings.gres), ("gpus-per-node", settings.gpus_per_node),
                          ("nodelist", settings.node)):
        if value is not None:
            argv.append(f"--{option}={value}")
    return [*argv, *settings.extra_args, "job.sh"]


class SlurmUnanswered(Exception):
    """No job tool answered about a job (a busy or restarting controller): its state is unknown, not ended."""


def answered(code: int, stderr: str) -> bool:
    """Whether a job tool answered: it listed, or it said that the controller does not know the job."""
    return code == 0 or NO_SUCH_JOB in stderr


def parse_job_id(stdout: str) -> str | None:
    """``sbatch --parsable`` prints ``ID`` or ``ID;cluster`` on a line of its own; a site's wrapper or a maintenance
    notice may print other lines before or after it."""
    for line in stdout.splitlines():
        found = JOB_ID_LINE.match(line.strip())
        if found:
            return found.group(1)
    return None


def parse_squeue(stdout: str, job_id: str) -> JobInfo | None:
    for line in stdout.splitlines():
        parts = line.strip().split("|", 6)
        if len(parts) == 7 and parts[0] == job_id:
            return JobInfo(job_id, parts[1], reason=parts[2], nodes=parts[3], submit=parts[4], name=parts[5],
                           workdir=parts[6], source="squeue")
    return None


def _exit_pair(text: str) -> tuple[int | None, int | None]:
    code, _, sig = text.partition(":")
    return (int(code) if code.isdigit() else None, int(sig) if sig.isdigit() else None)


def parse_sacct(stdout: str, job_id: str) -> JobInfo | None:
    """``sacct -n -P -X -o SACCT_FIELDS``: the job's line (a requeued job has one per run: the last counts)."""
    count = len(SACCT_FIELDS.split(","))
    rows = [line.split("|", count - 1) for line in stdout.splitlines() if line.split("|")[0] == job_id]
    if not rows or len(rows[-1]) != count:
        return None
    _, state, exit_text, nodes, submit, start, end, reason, partition, limit_min, name, workdir = rows[-1]
    code, sig = _exit_pair(exit_text)
    word, _, by = state.partition(" by ")
    info = JobInfo(job_id, word.strip(), reason=reason, nodes=nodes, submit=submit, start=start, end=end,
                   exit_code=code, signal=sig, restarts=len(rows) - 1, partition=partition,
                   time_limit=f"{limit_min} min" if limit_min.isdigit() else limit_min, name=name, workdir=workdir,
                   source="sacct")
    if by.strip():
        info.reason = f"by uid {by.strip()}"
    return info


def parse_scontrol(stdout: str, job_id: str) -> JobInfo | None:
    """``scontrol show job -o ID``: one line of Key=Value words."""
    fields: dict[str, str] = {}
    for word in stdout.split():
        key, sep, value = word.partition("=")
        if sep and key not in fields:
            fields[key] = value
    if fields.get("JobId") != job_id:
        return None
    code, sig = _exit_pair(fields.get("ExitCode", ""))
    restarts = fields.get("Restarts", "0")
    nodes = fields.get("NodeList", "")
    return JobInfo(job_id, fields.get("JobState", ""), reason=fields.get("Reason", ""),
                   nodes="" if nodes == "(null)" else nodes, submit=fields.get("SubmitTime", ""),
                   start=fields.get("StartTime", ""), end=fields.get("EndTime", ""), exit_code=code, signal=sig,
                   restarts=int(restarts) if restarts.isdigit() else 0, partition=fields.get("Partition", ""),
                   time_limit=fields.get("TimeLimit", ""), name=fields.get("JobName", ""),
                   workdir=fields.get("WorkDir", ""), source="scontrol")


def job_end(info: JobInfo, workload_exit: int | None, cancelled_here: bool) -> StepEnd:
    """How a finished job ended for the step: the workload's own exit code, or the state's reason."""
    facts = info.facts()
    state = info.state
    if state == "COMPLETED" or (workload_exit is not None and state in ("FAILED", "COMPLETED")):
        return StepEnd(exit_code=workload_exit if workload_exit is not None else info.exit_code, facts=facts)
    if state == "CANCELLED" and cancelled_here:
        return StepEnd(exit_code=workload_exit if workload_exit is not None else 130, facts=facts)
    template = STATE_REASONS.get(state, "it ended in state {state}")
    why = template.format(time_limit=info.time_limit or "its --time", nodes=info.nodes or "(none)", state=state,
                          by=f" {info.reason}" if info.reason.startswith("by uid") else "",
                          exit_code=info.exit_code, signal=info.signal)
    requeued = f"; requeued {info.restarts} time(s) before" if info.restarts else ""
    return StepEnd(exit_code=workload_exit, timed_out=state == "TIMEOUT",
                   reason=f"Slurm job {info.job_id} ended {state}: {why}{requeued}", facts=facts)


def queue_wait_end(info: JobInfo, waited_s: float, limit_s: float) -> StepEnd:
    """A job cancelled by reprokit because it stayed pending past ``slurm_max_queue_wait_s``."""
    return StepEnd(exit_code=None, reason=(f"Slurm job {info.job_id} was still PENDING after {waited_s:.0f} s"
                                           f" (reason: {info.reason or 'none given'}), past slurm_max_queue_wait_s"
                                           f" {limit_s:g}; it was cancelled"),
                   facts={**info.facts(), "state": "PENDING", "cancelled_by": "reprokit (queue wait)"})


__all__ = ["JobInfo", "LIVE_STATES", "NO_SUCH_JOB", "SACCT_FIELDS", "SQUEUE_FORMAT", "SlurmUnanswered", "answered",
           "job_end", "parse_job_id", "parse_sacct",
           "parse_scontrol", "parse_squeue", "queue_wait_end", "sbatch_argv", "time_limit"]
