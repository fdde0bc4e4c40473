"""Executors run one workload on a host and bring back its result.

Every executor implements ``Executor``, one life cycle: ``connect`` (fails before
anything is written), ``prepare(run_id, secrets)`` (takes the host's lock), any
number of ``stage_inputs`` / ``run_step`` calls (each a ``StepSpec``, ``launch.py``), and ``finish``. The local
native executor runs ``python -m <workload module>`` in a new process group with
this package on its path, streams the output to the step log (and to the
terminal through ``on_line``), and on a timeout or Ctrl-C ends the whole process
group. The SSH executor (``remote.py``) does the same over SSH, natively or in
Docker (``runtimes.py``), each step through its host's launcher (a detached session, a Slurm job).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import reprokit
from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts.launch import Handle, StepSpec
from reprokit.hosts.lock import HostLock
from reprokit.hosts.staging import gpu_env, stage_local
from reprokit.records.atomic import write_json_atomic
from reprokit.secrets import Redactor, mask_local_names

LOG = logging.getLogger(__name__)  # debug lines: shown under --verbose (reprokit.verbosity)

PACKAGE_ROOT = Path(reprokit.__file__).resolve().parent.parent
KILL_GRACE_S = 5.0


@dataclass
class WorkloadRun:
    exit_code: int | None  # None when it was killed for the timeout
    timed_out: bool
    duration_s: float
    result: dict[str, Any] | None
    result_problem: str | None = None  # why result.json is missing or unreadable
    not_pulled: list[dict[str, str]] = field(default_factory=list)  # host entries left there, and why (remote runs)
    end_reason: str | None = None  # why the launcher ended it other than by itself (a Slurm job's TIMEOUT, NODE_FAIL)
    launch: dict[str, Any] | None = None  # what the manifest records of the launch (a job's id, nodes, queue wait)


class Executor(Protocol):
    """What the runner drives on any host: local or SSH, native or docker."""

    @property
    def host(self) -> Host: ...

    def connect(self) -> None:
        """Reach the host (host keys, auth) before anything is written."""

    def prepare(self, run_id: str, secrets: dict[str, str] | None = None) -> None:
        """Take the host's lock and make it ready for the run's steps."""

    def stage_inputs(self, step_name: str, out_dir: Path, files: list) -> list:
        """Put a step's input files where its workload reads them; the (file, path on the host) pairs."""

    def host_path_exists(self, path: str) -> bool: ...

    def run_step(self, spec: StepSpec) -> WorkloadRun:
        """Run one workload to its end (or its timeout) and bring its files into ``spec.out_dir``."""

    def pending(self) -> dict[str, Handle]:
        """The steps whose files are still on the host (after a failure or an interrupt), and their handles."""

    def host_lock(self, run_id: str) -> HostLock:
        """The host's lock, wherever it lives."""

    def finish(self, keep_remote: bool = False) -> str | None:
        """Release the host's lock and clean up what the run left there; a line (and the lock kept) when a process
        of the run survived being killed there."""


def workload_argv(python: str, module: str, params_path: str, out_dir: str) -> list[str]:
    """The workload contract's command line (``reprokit/workloads/contract.py``), on any host and in any runtime."""
    return [python, "-m", module, "--params", params_path, "--out-dir", out_dir]


def read_result(out_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    path = out_dir / "result.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "the workload wrote no result.json"
    except ValueError as exc:
        return None, f"result.json is not valid JSON ({exc})"
    if not isinstance(data, dict) or "status" not in data:
        return None, "result.json has no 'status'"
    return data, None


class LocalFS:
    """LockFS on this machine's filesystem."""

    def mkdir_exclusive(self, path: str) -> bool:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path)
            return True
        except FileExistsError:
            return False

    def write_text(self, path: str, text: str) -> None:
        Path(path).write_text(text)

    def read_text(self, path: str) -> str | None:
        try:
            return Path(path).read_text()
        except OSError:
            return None

    def remove_tree(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def age_s(self, path: str) -> float | None:
        try:
            return time.time() - os.stat(path).st_mtime
        except OSError:
            return None


class LocalNativeExecutor:
    """Runs workloads on this machine, with this machine's Python; the lock lives in the runs directory."""

    def __init__(self, host: Host, runs_dir: Path = Path("runs")):
        if not host.is_local:
            raise HostError(f"host '{host.name}' is not local")
        if host.runtime != "native":
            raise HostError(
                f"host '{host.name}': the docker runtime on the local machine is not supported by this version;"
                " set `runtime: native` for it in inventory.yml"
            )
        self.host = host
        self.runs_dir = runs_dir
        self.secrets: dict[str, str] = {}
        self.redactor = Redactor()
        self.lock: HostLock | None = None

    def connect(self) -> None:
        """Nothing to open locally."""

    def prepare(self, run_id: str, secrets: dict[str, str] | None = None) -> None:
        self.secrets = dict(secrets or {})
        self.redactor = Redactor(list(self.secrets.values()))
        self.lock = self.host_lock(run_id)
        self.lock.acquire()

    def host_lock(self, run_id: str) -> HostLock:
        return HostLock(LocalFS(), self.host.name, str(self.runs_dir / ".locks" / self.host.name), run_id)

    def pending(self) -> dict[str, Handle]:
        return {}  # a local step's files are written where the record is

    def finish(self, keep_remote: bool = False) -> str | None:
        if self.lock:
            self.lock.release()
        return None  # steps on the control machine itself are not swept

    def stage_inputs(self, step_name: str, out_dir: Path, files: list) -> list:
        """Inputs of a step on this machine (staging.py): run files copied into the step, cached files as they are."""
        return stage_local(out_dir.resolve(), files)

    def host_path_exists(self, path: str) -> bool:
        return Path(path).exists()

    def run_step(self, spec: StepSpec) -> WorkloadRun:
        module, params, log_path, timeout_s, on_line = spec.module, spec.params, spec.log_path, spec.timeout_s, spec.on_line
        step_name = spec.name
        out_dir = spec.out_dir.resolve()
        out_dir.mkdir(parents=True, exist_ok=True)
        params_path = out_dir / "params.json"
        write_json_atomic(params_path, params)
        env = dict(os.environ, **self.secrets)  # secrets reach the workload through its environment only
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        env.update(assignment.split("=", 1) for assignment in gpu_env(self.host))
        argv = workload_argv(self.host.python or sys.executable, module, str(params_path), str(out_dir))
        LOG.debug("host %s: step %s: %s", self.host.name, step_name, shlex.join(argv))  # --verbose
        started = time.monotonic()
        with open(log_path, "ab") as log:
            try:
                proc = subprocess.Popen(
                    argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=env, start_new_session=True,
                )
            except OSError as exc:
                raise HostError(f"host '{self.host.name}': cannot start {argv[0]}: {exc.strerror}") from None
            pump = threading.Thread(target=_pump, args=(proc, log, on_line, self.redactor), daemon=True)
            pump.start()
            timed_out = False
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _end_group(proc)
            except BaseException:
                _end_group(proc)
                raise
            finally:
                pump.join(timeout=KILL_GRACE_S)
        mask_local_names(out_dir, self.redactor)  # names are data too: they become the manifest's keys
        for path in out_dir.rglob("*"):
            if path.is_file() and not path.is_symlink():
                self.redactor.file(path)  # every artifact, not only logs: a secret can land in any file
        duration = time.monotonic() - started
        result, problem = read_result(out_dir)
        return WorkloadRun(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            duration_s=round(duration, 3),
            result=result,
            result_problem=problem,
        )


def _pump(proc: subprocess.Popen, log: Any, on_line: Callable[[str], None] | None, redactor: Redactor) -> None:
    assert proc.stdout is not None
    for raw in iter(proc.stdout.readline, b""):
        raw = redactor.bytes(raw)
        log.write(raw)
        log.flush()
        if on_line:
            on_line(raw.decode("utf-8", errors="replace").rstrip("\n"))


def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the workload's process group, then SIGKILL what is left after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue
