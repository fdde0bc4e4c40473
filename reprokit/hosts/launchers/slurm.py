"""The Slurm launcher: each step one batch job, submitted on the login node over SSH, watched until it ends.

The login node is an SSH host like any other (``~/.ssh/config``, ``ProxyJump``, strict host keys: the transport
below). The step's directory is under the host's ``workdir`` on the cluster's shared file system, so the compute
node writes there and the control plane follows ``step.log`` and pulls the files back from the login node with
the same verified, confined pull-back as a session. The job's id is the handle: ``invoke collect`` polls it again,
Ctrl-C and SIGTERM ``scancel`` it. Slurm, not reprokit, decides where a job runs and when: the host lock here only
keeps two runs under one inventory name apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from reprokit.config.inventory import Host, SlurmSettings
from reprokit.errors import HostError
from reprokit.hosts import shell
from reprokit.hosts.access.base import Connection, Puller
from reprokit.hosts.launch import Detached, Handle, PullIncomplete, StepEnd
from reprokit.hosts.launchers.session import mark_pattern, reap_command
from reprokit.hosts.launchers.slurm_tools import (
    SACCT_FIELDS,
    SLURM_TIME,
    SQUEUE_FORMAT,
    JobInfo,
    SlurmUnanswered,
    answered,
    job_end,
    parse_job_id,
    parse_sacct,
    parse_scontrol,
    parse_squeue,
    queue_wait_end,
    sbatch_argv,
)
from reprokit.hosts.logstream import stream_log
from reprokit.hosts.pull_listing import Listing, PullStopped
from reprokit.hosts.retry import Retry
from reprokit.hosts.shell_scripts import library, render
from reprokit.hosts.transport import LINK_ERRORS, ConnectionLost
from reprokit.output.hosttext import shown

POLL_MIN_S, POLL_MAX_S = 0.5, 5.0  # a job tool call per poll: gentler on the controller than a session's file reads
OVERRUN_GRACE_S = 120  # Slurm ends a job at its --time; the control plane cancels it itself only this much later
CANCEL_WAIT_S = 30.0
EXIT_PLACEHOLDER = "running"
UNANSWERED_MAX_S = 300.0  # Slurm may stay silent about a job this long; then the run detaches (the job goes on)
REAP_ANSWER_WAIT_S = 60.0  # at the run's end: how long squeue is asked again whether jobs of the run still run
# a busy controller's short silence must not keep the lock: squeue asked again every 2 s, within a bound
REAP_ASK = Retry(attempts=None, transient=(SlurmUnanswered,), first_delay_s=2.0, max_delay_s=2.0,
                 deadline_s=REAP_ANSWER_WAIT_S)
SUBMIT_CANCEL_WAIT_S = 60.0  # after an interrupted sbatch: how long its job is looked for by name, to cancel it


def job_script(remote_dir: str, command: str, cleanup: str = "") -> str:
    """``job.sh`` (``hosts/sh/slurm_job.sh``): the step in its directory, its log and its exit code there (sbatch copies
    the script away); the secrets and the exit code as the session's wrapper takes and writes them.

    The workload carries the run's mark (``REPROKIT_RUN``, as a session's step does): on a cluster without cgroup
    process tracking (``proctrack/linuxproc``), a child that leads a session of its own escapes Slurm's kill, and the
    script sweeps what carries the mark once the workload ended.
    """
    run_id, step = remote_dir.rstrip("/").rsplit("/", 2)[-2:]
    return render("slurm_job.sh", LIBRARY=library("confine.sh", "step_parts.sh"), STEP_DIR=shell.quote(remote_dir),
                  PLACEHOLDER=EXIT_PLACEHOLDER, MARK=shell.quote(f"{run_id}/{step}"),
                  MARK_PATTERN=shell.quote(mark_pattern(run_id, step)), COMMAND=command, CLEANUP=cleanup)


def slurm_settings(host: Host) -> SlurmSettings:
    return host.slurm or SlurmSettings()


@dataclass
class SlurmLauncher:
    """The ``Launcher`` of a Slurm login node: ``sbatch``, ``squeue``/``sacct``/``scontrol``, ``scancel``."""

    transport: Connection
    pullback: Puller
    kind: str = "slurm"
    in_batch_job: bool = True  # each step is a batch job: a runtime may start its container with the job's srun
    cancelled: set[str] = field(default_factory=set)  # jobs this process cancelled (any other cancel is someone else's)
    submitted: dict[str, float] = field(default_factory=dict)  # job id -> when it was submitted (monotonic)
    unanswered_since: dict[str, float] = field(default_factory=dict)  # job id -> since when Slurm is silent about it
    pending_reasons: dict[str, str] = field(default_factory=dict)  # job id -> the last PENDING reason said

    @property
    def host(self) -> Host:
        return self.transport.host

    @staticmethod
    def lock_dir(host: Host) -> str:
        return f"{host.workdir.rstrip('/')}/locks/{host.name}"

    # -- launch ----------------------------------------------------------------------------------
    def launch(self, name: str, remote_dir: str, command: str, timeout_s: float, params: bytes,
               secrets: tuple[str, str] | None = None, cleanup: str = "") -> Handle:
        transport = self.transport
        try:
            transport.sh(f"mkdir -p -- {shell.quote(remote_dir)}")
            transport.write_bytes(f"{remote_dir}/params.json", params)
            if secrets:
                transport.write_private(f"{remote_dir}/{secrets[0]}", secrets[1])
            transport.write_text(f"{remote_dir}/exit_code", f"{EXIT_PLACEHOLDER}\n")
            transport.write_text(f"{remote_dir}/job.sh", job_script(remote_dir, command, cleanup))
        except OSError as exc:
            problem = transport.explain(f"cannot write step '{name}'", str(exc) or "Failure")
            raise HostError(transport.disk_problem(problem)) from None
        job_name = self.job_name(remote_dir)
        argv = sbatch_argv(slurm_settings(self.host), job_name, remote_dir, timeout_s)
        try:
            code, out, err = transport.sh(f"cd -- {shell.quote(remote_dir)} && {shell.join(argv)}", check=False)
        except BaseException:
            self.cancel_submitted(job_name)  # sbatch may go on and submit: its job must not outlive the run
            raise
        job_id = parse_job_id(out)
        if job_id is None:
            said = (err.strip() or out.strip() or "no output").splitlines()[-1]
            transport.sh(f"rm -f -- {shell.path(remote_dir, '.secrets.sh')} {shell.path(remote_dir, '.secrets.env')}",
                         check=False)
            raise HostError(f"host '{self.host.name}': sbatch refused step '{name}': {said}; check the slurm_* variables"
                            f" of {self.host.name} in the inventory ({self.host.source})")
        self.submitted[job_id] = time.monotonic()
        self.transport.say(f"      submitted Slurm job {job_id} for '{name}' on {self.host.name}")
        return Handle(self.kind, job_id, remote_dir)

    @staticmethod
    def job_name(remote_dir: str) -> str:
        """``--job-name`` of the step in ``remote_dir`` (``.../runs/RUN_ID/STEP``): the run's id and the step's name."""
        run_id, step = remote_dir.rstrip("/").rsplit("/", 2)[-2:]
        return f"{run_id}-{step}"

    def cancel_submitted(self, job_name: str) -> None:
        """Cancel the job an interrupted ``sbatch`` may have submitted: by its name (unique: the run's id), again
        until no ``sbatch`` of that name runs on the login node, so a submit that lands late is cancelled too."""
        name = shell.quote(job_name)
        with_name = shell.quote(f"--job-name={job_name}")
        tries = int(SUBMIT_CANCEL_WAIT_S / 0.5)
        submitting = f"ps -u \"$u\" -o comm= -o args= | awk -v n={with_name} '$1 == \"sbatch\" && index($0, n) {{ f = 1 }} END {{ exit !f }}'"
        script = (f'u=$(id -un); i=0; while [ $i -lt {tries} ]; do scancel --name={name} --user="$u" 2>/dev/null;'
                  f' {submitting} || break; i=$((i + 1)); sleep 0.5; done; scancel --name={name} --user="$u"')
        try:
            self.transport.sh(script, timeout_s=SUBMIT_CANCEL_WAIT_S + 30, check=False)
        except Exception as exc:  # the run is being stopped already: say what may be left, do not hide the stop
            self.transport.say(f"      could not cancel Slurm job {job_name!r} after the interrupted submit ({exc});"
                               f" check `squeue --name={job_name}` on {self.host.name}")

    # -- watch -----------------------------------------------------------------------------------
    def job(self, job_id: str) -> JobInfo | None:
        """The job as squeue shows it while it lives; then sacct, or scontrol where there is no accounting.

        None only when the tools answered and none knows the job (past MinJobAge, no accounting); when none of
        them answered (a controller that times out), ``SlurmUnanswered``: the job's state is unknown, not ended.
        """
        code, out, err = self._ask(f"squeue -h -j {shell.quote(job_id)} -o {shell.quote(SQUEUE_FORMAT)}")
        info = parse_squeue(out, job_id) if code == 0 else None
        if info and info.live:
            return info
        queue_answered, silences = answered(code, err), [err]
        code, out, err = self._ask(f"sacct -n -P -X -j {shell.quote(job_id)} -o {SACCT_FIELDS}")
        done = parse_sacct(out, job_id) if code == 0 else None
        history_answered = code == 0
        if done is None or done.live:
            code, out, err = self._ask(f"scontrol show job -o {shell.quote(job_id)}")
            done = parse_scontrol(out, job_id) if code == 0 else done
            history_answered = history_answered or answered(code, err)
            silences.append(err)
        found = done or info
        if found is None and not (queue_answered and history_answered):
            said = next((line.strip() for e in reversed(silences) for line in reversed(e.splitlines()) if line.strip()),
                        "no output")
            raise SlurmUnanswered(said[:300])
        return found

    def _ask(self, command: str) -> tuple[int, str, str]:
        """One job tool's answer; a tool that hangs past the I/O timeout is a silence (the link itself is fine)."""
        try:
            return self.transport.sh(command, check=False)
        except TimeoutError:
            return -1, "", f"`{command.split()[0]}` gave no answer within {self.transport.io_timeout_s:.0f} s"

    def workload_exit(self, remote_dir: str) -> int | None:
        text = (self.transport.read_text(f"{remote_dir}/exit_code") or "").strip()
        return int(text) if text.lstrip("-").isdigit() else None

    def poll(self, handle: Handle) -> StepEnd | None:
        if not handle.id:  # submitted, but the record has no job id: only the job's own files can tell
            code = self.workload_exit(handle.remote_dir)
            return None if code is None else StepEnd(exit_code=code)
        try:
            info = self.job(handle.id)
        except SlurmUnanswered as exc:
            return self._unanswered(handle, str(exc))
        self.unanswered_since.pop(handle.id, None)
        if info is not None and (why := info.foreign(self.job_name(handle.remote_dir), handle.remote_dir)):
            raise HostError(f"host '{self.host.name}': Slurm job {handle.id} is not this run's: {why}; nothing was"
                            " cancelled or removed; check the job id the record names")
        if info is None:  # Slurm answered and has forgotten the job (past MinJobAge, no accounting)
            code = self.workload_exit(handle.remote_dir)
            return StepEnd(exit_code=code, reason=None if code is not None else
                           f"Slurm no longer knows job {handle.id} and it left no exit code",
                           facts={"launcher": "slurm", "job_id": handle.id, "state": "UNKNOWN"})
        if info.live:
            return self._queue_wait(handle, info)
        return job_end(info, self.workload_exit(handle.remote_dir), handle.id in self.cancelled)

    def _unanswered(self, handle: Handle, said: str) -> None:
        """None while Slurm's silence about the job is shorter than UNANSWERED_MAX_S (said once); past it, the run
        detaches: the job may still run, and its directory stays for ``invoke collect``."""
        now = time.monotonic()
        since = self.unanswered_since.setdefault(handle.id, now)
        if since == now:
            self.transport.say(f"      Slurm does not answer about job {handle.id} ({shown(said)}); its state is unknown,"
                               f" asking again for up to {UNANSWERED_MAX_S:.0f} s")
        if now - since < UNANSWERED_MAX_S:
            return None
        step = handle.remote_dir.rstrip("/").rsplit("/", 1)[-1]
        raise Detached(f"Slurm has not answered about job {handle.id} for {now - since:.0f} s ({shown(said)}); the job may"
                       " still run and its files stay on the login node: `invoke collect` finishes", step,
                       handle.remote_dir, handle)

    def _queue_wait(self, handle: Handle, info: JobInfo) -> StepEnd | None:
        """None while the job may go on; its end when it stayed pending past slurm_max_queue_wait_s.

        Each new reason Slurm gives for the wait (Resources, Priority, PartitionDown) is said once."""
        limit_s = slurm_settings(self.host).max_queue_wait_s
        if info.state != "PENDING":
            return None
        if info.reason not in ("", "None") and self.pending_reasons.get(handle.id) != info.reason:
            self.pending_reasons[handle.id] = info.reason
            self.transport.say(f"      Slurm job {handle.id} is PENDING (reason: {shown(info.reason) or 'none given'});"
                               f" waiting up to {limit_s:g} s (slurm_max_queue_wait_s)")
        waited_s = self._pending_s(handle.id, info)
        if waited_s is None or waited_s < limit_s:
            return None
        self.stop(handle)
        return queue_wait_end(info, waited_s, limit_s)

    def _pending_s(self, job_id: str, info: JobInfo) -> float | None:
        if job_id in self.submitted:
            return time.monotonic() - self.submitted[job_id]
        code, out, _ = self.transport.sh("date +%Y-%m-%dT%H:%M:%S", check=False)  # the login node's clock, as Slurm's
        try:
            now, submit = datetime.strptime(out.strip(), SLURM_TIME), datetime.strptime(info.submit, SLURM_TIME)
        except ValueError:
            return None
        return (now - submit).total_seconds()

    def follow(self, handle: Handle, name: str, timeout_s: float, on_line: Callable[[str], None] | None,
               check_stop: Callable[[], None]) -> StepEnd:
        """Stream the job's step.log until Slurm says it ended; reconnect on a dropped link."""
        log_path = f"{handle.remote_dir}/step.log"
        offset, pending, poll_s, running_since = 0, b"", POLL_MIN_S, None
        while True:
            try:
                before = offset
                offset, pending = stream_log(self.transport, self.pullback.redactor, log_path, offset, pending, on_line)
                poll_s = POLL_MIN_S if offset != before else min(POLL_MAX_S, poll_s * 1.5)
                end = self.poll(handle)
                if end is not None:
                    stream_log(self.transport, self.pullback.redactor, log_path, offset,
                               pending + b"\n" if pending else b"", on_line)
                    return end
                running_since = running_since or (time.monotonic() if offset else None)
                if running_since and time.monotonic() > running_since + timeout_s + OVERRUN_GRACE_S:
                    self.stop(handle)
                    return StepEnd(exit_code=None, timed_out=True, reason=(
                        f"Slurm job {handle.id} ran {timeout_s:.0f} s + {OVERRUN_GRACE_S} s past its timeout; reprokit"
                        " cancelled it"), facts={"launcher": "slurm", "job_id": handle.id})
            except LINK_ERRORS as exc:
                if not self.transport.dropped(exc):
                    raise
                self.transport.say(f"      connection to {self.host.name} lost during '{name}' ({type(exc).__name__});"
                                   f" reconnecting (Slurm job {handle.id} goes on)")
                self.transport.reconnect()
            check_stop()
            time.sleep(poll_s)

    def usable_nodes(self) -> list[str]:
        """The nodes of the host's partition that can take a job now (idle, mixed or allocated), as sinfo lists them."""
        partition = slurm_settings(self.host).partition
        where = f" -p {shell.quote(partition)}" if partition else ""
        _, out, err = self.transport.sh(f"sinfo -h -N{where} -o '%N|%t'", check=False)
        if not out.strip():
            raise HostError(f"host '{self.host.name}': sinfo lists no nodes{where and ' in partition ' + str(partition)}:"
                            f" {err.strip() or 'no output'}")
        nodes = [n for n, _, state in (line.partition("|") for line in out.split())
                 if state.rstrip("*~#!%$@^-") in ("idle", "mix", "alloc")]
        return list(dict.fromkeys(nodes))

    # -- stop, collect ---------------------------------------------------------------------------
    def stop(self, handle: Handle) -> None:
        """``scancel`` the job and wait until Slurm has ended it (its processes on the node get TERM, then KILL)."""
        transport = self.transport
        if handle.id:
            self.cancelled.add(handle.id)
            transport.sh(f"scancel {shell.quote(handle.id)}", check=False)
            deadline = time.monotonic() + CANCEL_WAIT_S
            while time.monotonic() < deadline:
                try:
                    info = self.job(handle.id)
                    live = info is not None and info.live
                except SlurmUnanswered:
                    live = True  # unknown: asked again until the cancel's bound
                if not live:
                    break
                time.sleep(0.5)
        transport.sh(f"rm -f -- {shell.path(handle.remote_dir, '.secrets.env')} "
                     f"{shell.path(handle.remote_dir, '.secrets.sh')}", check=False)
        if self.workload_exit(handle.remote_dir) is None:
            transport.write_text(f"{handle.remote_dir}/exit_code", "130\n")

    def reap(self, run_dir: str) -> int:
        """What the run left: its jobs Slurm still lists, and processes that carry its mark and outlived their job.

        A job still listed keeps the run's directory (its step may write there yet); a query Slurm does not answer
        counts as one, for the same reason. Processes are swept by the run's mark, as on a session host: where the
        cluster has no cgroup process tracking, a child in a session of its own outlives its job (seen where the login node shares
        the compute nodes' process table; on the nodes themselves ``job.sh`` sweeps them).
        """
        run_id = run_dir.rstrip("/").rsplit("/", 1)[-1]
        def ask_queue(_: int) -> str:
            code, out, err = self._ask("squeue -h -u \"$(id -un)\" -o '%i|%Z'")
            if code != 0:
                raise SlurmUnanswered(err.strip())
            return out

        try:
            out = REAP_ASK.run(ask_queue)
        except SlurmUnanswered as unanswered:
            self.transport.say(f"      Slurm does not answer whether jobs of run {run_id} still run ({shown(str(unanswered))});"
                               f" {run_dir} stays on {self.host.name}")
            return 1
        live = [line for line in out.splitlines() if line.partition("|")[2].startswith(run_dir.rstrip("/") + "/")]
        for line in live:
            self.transport.say(f"      Slurm still lists job {shown(line.partition('|')[0])} of run {run_id};"
                               f" {run_dir} stays on {self.host.name}")
        _, out, _ = self.transport.sh(reap_command(run_dir, run_id), check=False)
        marked = int(out.strip()) if out.strip().isdigit() else 0
        return len(live) + marked

    def collect(self, handle: Handle, out_dir: Path) -> Listing:
        name = handle.remote_dir.rstrip("/").rsplit("/", 1)[-1]
        try:
            return self.pullback.pull(handle.remote_dir, out_dir)
        except ConnectionLost as exc:
            raise Detached(f"{exc}; job {handle.id} of step '{name}' ended, its files stay on the login node", name,
                           handle.remote_dir, handle) from None
        except PullStopped as exc:
            raise PullIncomplete(str(exc), name, handle.remote_dir, handle) from None


__all__ = ["SlurmLauncher", "job_script"]
