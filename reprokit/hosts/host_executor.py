"""The one executor: workloads on any host (this machine, an SSH host, a Slurm login node), in any runtime.

It composes the three registries below it: the ``Connection`` (``access/``: run, put, read, pull; this machine
or SSH), the ``Runtime`` (how the workload's command is built: ``runtimes/``), the ``Launcher`` that starts,
follows, stops and collects each step (a detached session or a Slurm job: ``launchers/``, the protocol in
``launch.py``) and the connection's ``Puller`` of the step's files. What is its own:
the run's life cycle on the host (the lock, the shipped code, the run directory) and the bookkeeping of
what the host still holds. The host's run directory is removed only once every file of every step is back
and verified: after any failure or interrupt during a pull-back the host keeps its copy and ``invoke
collect`` finishes the job. Containers are named after the run and removed on success, failure, timeout
and Ctrl-C.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import posixpath
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.config.inventory import Host
from reprokit.errors import HostError, ReprokitError
from reprokit.hosts import host_files, shell
from reprokit.hosts.access.base import Connection, Puller
from reprokit.hosts.executor import PACKAGE_ROOT, WorkloadRun, read_result
from reprokit.hosts.host_lock import HostLock
from reprokit.hosts.launch import STOP, Detached, Handle, Launcher, StepEnd, StepSpec
from reprokit.hosts.logstream import step_log, stream_log
from reprokit.hosts.pull_listing import Listing
from reprokit.hosts.retry import Retry
from reprokit.hosts.runtimes.base import Runtime, StepPlace
from reprokit.hosts.shell_scripts import render
from reprokit.hosts.transport import LINK_ERRORS, ConnectionLost
from reprokit.output.secrets import Redactor, env_file_text
from reprokit.records.atomic import write_json_atomic

LOG = logging.getLogger(__name__)  # debug lines: shown under --verbose (reprokit.output.verbosity)
# the clean-up after a run whose link dropped: once more after a reconnect (a lock left behind blocks the host)
CLEAN_UP_RETRY = Retry(attempts=2, transient=(ReprokitError, *LINK_ERRORS))


@functools.cache
def code_bundle() -> tuple[bytes, str]:
    """A tar.gz of the workload code (``reprokit/__init__.py`` and ``reprokit/workloads``), and its sha256.

    Built once per process: a fan-out's executors would otherwise each spend ~40 ms of the GIL taring the same files.
    """
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        paths = [PACKAGE_ROOT / "reprokit" / "__init__.py"]
        paths += sorted(p for p in (PACKAGE_ROOT / "reprokit" / "workloads").rglob("*")
                        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".cu", ".h", ".json", ".txt"))
        for path in paths:
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(PACKAGE_ROOT)))
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    data = buf.getvalue()
    return data, hashlib.sha256(data).hexdigest()


@dataclass
class HostExecutor:
    """The ``Executor`` (``executor.py``) of every host: one step lifecycle, whatever the access."""

    transport: Connection
    runtime: Runtime
    pullback: Puller
    launcher: Launcher
    lock: HostLock | None = None
    run_id: str | None = None
    code_dir: str | None = None
    secrets: dict[str, str] = field(default_factory=dict)
    unpulled: dict[str, Handle] = field(default_factory=dict)  # step -> its handle, until its files are back and verified
    kept_reasons: list[str] = field(default_factory=list)  # why the host's run directory must stay
    stopping: bool = False  # a step is being ended after Ctrl-C/SIGTERM: STOP no longer interrupts the pull-back
    models_present: bool = False  # the host has its models_dir (then containers mount it read-only)

    def __post_init__(self) -> None:
        self.pullback.check_stop = self.check_stop

    @property
    def host(self) -> Host:
        return self.transport.host

    @property
    def workdir(self) -> str:
        return self.host.workdir.rstrip("/")

    def run_dir(self, run_id: str) -> str:
        return f"{self.workdir}/runs/{run_id}"

    def check_stop(self) -> None:
        """End this thread's step like Ctrl-C when the process was told to stop (signals reach the main thread only)."""
        if STOP.is_set() and not self.stopping:
            raise KeyboardInterrupt

    def connect(self) -> None:
        self.transport.connect()

    def host_lock(self, run_id: str) -> HostLock:
        """The host's lock (one place for its path: the run, ``invoke collect`` and ``invoke unlock`` use it)."""
        return HostLock(self.transport, self.host.name, self.launcher.lock_dir(self.host), run_id)

    def pending(self) -> dict[str, Handle]:
        """The steps whose files are still on the host, and how to find each again."""
        return dict(self.unpulled)

    def close_connection(self) -> None:
        self.transport.close()

    # -- the run on the host ------------------------------------------------------------------
    def prepare(self, run_id: str, secrets: dict[str, str] | None = None) -> None:
        """Connect, check the runtime, take the host's lock, ship the workload code."""
        self.run_id = run_id
        self.secrets = dict(secrets or {})
        self.pullback.redactor = Redactor(list(self.secrets.values()))
        if not self.transport.is_open:
            self.transport.connect()
        try:
            self._prepare(run_id)
        except LINK_ERRORS as exc:
            problem = self.transport.explain("cannot prepare the host", f"{type(exc).__name__}: {exc}")
            raise HostError(self.transport.disk_problem(problem) if isinstance(exc, OSError) else problem) from None

    def _prepare(self, run_id: str) -> None:
        sh = self.transport.sh
        self.runtime.check(self.transport, self.launcher.in_batch_job)
        self.lock = self.host_lock(run_id)
        self.code_dir = f"{self.workdir}/code/{code_bundle()[1][:16]}"
        # one round trip for the directories and two questions: each command is a shell start on the host, and a
        # fan-out pays them on every host at once
        _, out, _ = sh(f"mkdir -p -- {shell.path(self.workdir, 'runs')} {shell.path(self.workdir, 'code')}"
                       f" {shell.quote(posixpath.dirname(self.lock.lock_dir))} && {host_files.cache_dirs_command(self.host)}"
                       f" && {{ if test -e {shell.quote(self.host.models_dir)}; then echo models; fi;"
                       f" if test -f {shell.path(self.code_dir, '.complete')}; then echo code; fi; }}")
        self.models_present = "models" in out.split()
        self.lock.acquire()
        try:
            if "code" not in out.split():
                self._ship_code()
            sh(f"mkdir -p -- {shell.quote(self.run_dir(run_id))}")
        except BaseException:
            self.lock.release()
            raise

    def _ship_code(self) -> None:
        data, digest = code_bundle()
        assert self.code_dir
        # per run, then renamed into place: two runs of one workdir (a --nodes fan-out) may ship at the same time
        tmp = f"{self.workdir}/code/.{digest[:16]}.{self.run_id}"
        try:
            self.transport.write_bytes(f"{tmp}.tar.gz", data)
        except OSError as exc:
            problem = self.transport.explain("cannot upload the workload code", str(exc) or "Failure")
            raise HostError(self.transport.disk_problem(problem)) from None
        script = render("ship_code.sh", STAGED=shell.quote(tmp), ARCHIVE=shell.quote(f"{tmp}.tar.gz"),
                        CODE_DIR=shell.quote(self.code_dir))
        code, out, err = self.transport.sh(script, check=False)
        if code != 0:
            raise HostError(self.transport.explain("cannot unpack the workload code", err or out))

    def finish(self, keep_remote: bool = False) -> str | None:
        """Kill what the run left running, then release the lock; remove the host's run directory only when every
        step's files are back and verified. A line when a process of the run survived its kill: the lock stays.

        A link that dropped (or an sshd that died) during the run is reopened once for this: a lock left behind
        blocks the host for every later run."""
        def reopen(exc: BaseException, _: float) -> None:
            if not self._reopened():
                raise exc  # the link stays down: the clean-up's own error is the one to tell

        try:
            return CLEAN_UP_RETRY.run(lambda _: self._clean_up(keep_remote), reopen)
        except (ReprokitError, *LINK_ERRORS) as exc:
            self.transport.say(f"      could not clean up on {self.host.name} ({exc}); its lock may stay:"
                               f" `invoke unlock --host {self.host.name}`")
            return None
        finally:
            self.transport.close()

    def _reopened(self) -> bool:
        try:
            self.transport.reconnect()
            return True
        except (ReprokitError, *LINK_ERRORS):
            return False

    def _clean_up(self, keep_remote: bool) -> str | None:
        left = self._reap()  # first: the step directories name their cgroups
        if self.run_id and self.unpulled:
            self.transport.say(f"      kept {self.run_dir(self.run_id)} on {self.host.name}: the files of"
                               f" {', '.join(sorted(self.unpulled))} are not all back; `invoke collect {self.run_id}`"
                               " finishes")
        elif self.run_id and self.kept_reasons:
            self.transport.say(f"      kept {self.run_dir(self.run_id)} on {self.host.name}: {'; '.join(self.kept_reasons)}")
        elif self.run_id and not keep_remote and not left:  # never while something of the run may still write there
            self.transport.sh(f"rm -rf -- {shell.quote(self.run_dir(self.run_id))}", check=False)
        if left:
            self.transport.say(f"      {left}")
        elif self.lock:
            self.lock.release()
        return left

    def _reap(self) -> str | None:
        """Nothing of the run may outlive it on the host; a line when a process survived being killed."""
        if not self.run_id:
            return None
        survivors = self.launcher.reap(self.run_dir(self.run_id))
        if not survivors:
            return None
        return (f"{survivors} process(es) of run {self.run_id} survived being killed on {self.host.name}; its lock"
                f" stays: end them there, then `invoke unlock --host {self.host.name}`")

    # -- one workload --------------------------------------------------------------------------
    def stage_inputs(self, step_name: str, out_dir: Path, files: list) -> list:
        """Upload a step's input files before it starts (host_files.py); the workload gets the returned paths."""
        assert self.run_id
        return host_files.stage_on_host(self.transport, f"{self.run_dir(self.run_id)}/{step_name}", files)

    def host_path_exists(self, path: str) -> bool:
        return self.transport.path_exists(path)

    def run_step(self, spec: StepSpec) -> WorkloadRun:
        assert self.run_id and self.code_dir
        step_name, out_dir = spec.name, spec.out_dir
        remote_dir = f"{self.run_dir(self.run_id)}/{step_name}"
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out_dir / "params.json", spec.params)
        place = StepPlace(self.run_id, step_name, remote_dir, self.code_dir, self.models_present, bool(self.secrets),
                          self.transport.python_path())
        command = self.runtime.command(spec.module, spec.image, place)
        LOG.debug("host %s: step %s: %s", self.host.name, step_name, command)  # --verbose; secrets go by file, never here
        secrets_file = None
        if self.secrets:
            secrets_file = (self.runtime.secrets_file, env_file_text(self.secrets, for_shell=self.runtime.secrets_for_shell))
        handle = self.launcher.launch(step_name, remote_dir, command, spec.timeout_s,
                                      (out_dir / "params.json").read_bytes(), secrets_file, self.runtime.cleanup(place))
        self.unpulled[step_name] = handle  # from now on the host holds results until they are back
        if spec.on_launch:
            spec.on_launch(handle)
        started = time.monotonic()
        try:
            end = self.launcher.follow(handle, step_name, spec.timeout_s, spec.on_line, self.check_stop)
        except KeyboardInterrupt:
            self.stopping = True  # what the stopped step wrote still comes back
            self._stop_quietly(handle, step_name)
            if self._collect_quietly(handle, out_dir):
                del self.unpulled[step_name]
            raise
        except ConnectionLost as exc:
            raise Detached(f"{exc}; step '{step_name}' goes on on the host", step_name, remote_dir, handle) from None
        duration = time.monotonic() - started
        listing = self.launcher.collect(handle, out_dir)
        del self.unpulled[step_name]
        if listing.not_pulled:
            self.kept_reasons.append(f"{len(listing.not_pulled)} entries of step '{step_name}' could not be pulled"
                                     " (listed in the manifest)")
        if spec.log_path != out_dir / "step.log" and (out_dir / "step.log").exists():
            (out_dir / "step.log").replace(spec.log_path)
        return self.workload_run(end, out_dir, duration, listing)

    def workload_run(self, end: StepEnd, out_dir: Path, duration_s: float, listing: Listing) -> WorkloadRun:
        """What a step did, from how its launcher saw it end and the files that came back."""
        result, problem = read_result(out_dir)
        timed_out = end.timed_out and result is None
        if problem and not timed_out and not end.reason:
            problem = self.transport.disk_problem(problem)
        code = -1 if end.exit_code is None and not timed_out else end.exit_code
        return WorkloadRun(exit_code=None if timed_out else code, timed_out=timed_out,
                           duration_s=round(duration_s, 3), result=result, result_problem=problem,
                           not_pulled=listing.not_pulled, end_reason=end.reason, launch=end.facts or None)

    def _stop_quietly(self, handle: Handle, name: str) -> None:
        try:
            self.launcher.stop(handle)
        except (ReprokitError, *LINK_ERRORS) as exc:
            self.transport.say(f"      could not end step '{name}' on {self.host.name}: {exc}")

    def _collect_quietly(self, handle: Handle, out_dir: Path) -> bool:
        """Bring back what a stopped step wrote; False (and the host keeps it for ``invoke collect``) on any failure."""
        try:
            self.launcher.collect(handle, out_dir)
            return True
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - best effort while stopping
            self.transport.say(f"      could not bring back {handle.remote_dir} ({type(exc).__name__}: {exc}); it stays"
                               " on the host")
            return False

    # -- a run left on the host (``invoke collect``, ``--prune``) ----------------------------------
    def attach(self, run_id: str) -> None:
        """Reach the host of a run started earlier, its steps found by their handles; the lock taken over on ``finish``."""
        self.connect()
        self.run_id = run_id
        self.lock = self.host_lock(run_id)

    def stop(self, handle: Handle) -> None:
        """End the step of ``handle`` on the host (``invoke cancel``); its files stay there for ``invoke collect``."""
        self.launcher.stop(handle)

    def read_log(self, handle: Handle, offset: int, pending: bytes,
                 on_line: Callable[[str], None] | None) -> tuple[int, bytes]:
        """The step's log from ``offset`` on the host, each whole line masked and handed to ``on_line``."""
        return stream_log(self.transport, self.pullback.redactor, step_log(handle.remote_dir), offset, pending, on_line)

    def prune(self, run_id: str) -> str:
        """Remove the host's copy of run ``run_id``; the directory removed."""
        run_dir = self.run_dir(run_id)
        self.transport.remove_tree(run_dir)
        return run_dir

    def poll(self, handle: Handle) -> StepEnd | None:
        """How the step of ``handle`` ended, or None while it is queued or runs."""
        return self.launcher.poll(handle)

    def launched(self, handle: Handle) -> bool:
        """Whether the step of ``handle`` was ever launched there (every launcher writes its exit_code placeholder)."""
        return self.transport.read_text(f"{handle.remote_dir}/exit_code") is not None

    def pull(self, handle: Handle, out_dir: Path, on_bytes: Callable[[int], None] | None = None) -> Listing:
        return self.pullback.pull(handle.remote_dir, out_dir, on_bytes)


__all__ = ["ConnectionLost", "Detached", "HostExecutor", "STOP", "code_bundle"]
