"""Run workloads on a remote host over one SSH connection, natively or in Docker.

Each step runs detached on the host (``setsid``, its own session, a remote ``timeout``), so a dropped
connection never kills it: the control plane reconnects, or leaves the run ``detached`` for ``invoke
collect``. When the step ends, whatever it left running in its session is killed. Its log streams back
while it runs; its files come back through ``pullback.py``, which trusts no path the host sends. The
host's run directory is removed only once every file of every step is back and verified: after any
failure or interrupt during a pull-back the host keeps its copy and ``invoke collect`` finishes the job.
Every value reaching the host's shell is quoted by ``shell.py``. Containers are named after the run and
removed on success, failure, timeout and Ctrl-C.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko
from fabric import Connection
from invoke.exceptions import CommandTimedOut

from reprokit.config.inventory import Host, Inventory
from reprokit.errors import HostError, ReprokitError
from reprokit.hosts import shell, staging
from reprokit.hosts.executor import PACKAGE_ROOT, WorkloadRun, read_result
from reprokit.hosts.lock import HostLock
from reprokit.hosts.pullback import (
    MAX_PULL_BYTES,
    PullBackMixin,
    PullStats,
    PullStopped,
)
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS, _is_transient, connection_for, open_connection
from reprokit.records.atomic import write_json_atomic
from reprokit.secrets import Redactor, env_file_text

POLL_MIN_S, POLL_MAX_S = 0.02, 0.5  # poll fast while a step is short or chatty, back off while it is quiet
LOG = logging.getLogger(__name__)  # debug lines: shown under --verbose (reprokit.verbosity)
RECONNECT_ATTEMPTS = 5
IO_TIMEOUT_S = 30.0
KILL_AFTER_S = 10
REMOTE_GRACE_S = 30  # the remote `timeout` should end a step first; the control plane waits this much longer
EXIT_PLACEHOLDER = b"running\n"  # the wrapper overwrites these 8 bytes with the exit code
LIVENESS_EVERY_S = 5.0
SMALL_FILE_MAX_BYTES = 1 << 20  # exit_code, pid, a lock's owner.json: read at most this much
STREAM_READ_BYTES = 4 << 20  # the step log is followed at most this much per read
STOP = threading.Event()  # set by a signal handler (e.g. of a --group fan-out): every executor ends its step


class ConnectionLost(HostError):
    """The host stayed unreachable through every reconnect attempt."""


class Detached(HostError):
    """The connection was lost while a step ran on the host; the step goes on there."""

    status = "detached"

    def __init__(self, message: str, step: str, remote_dir: str):
        super().__init__(message)
        self.step = step
        self.remote_dir = remote_dir


class PullIncomplete(Detached):
    """A finished step's pull-back stopped (disk full, byte cap, damaged data); the host keeps its copy."""

    status = "incomplete"


def code_bundle() -> tuple[bytes, str]:
    """A tar.gz of the workload code (``reprokit/__init__.py`` and ``reprokit/workloads``), and its sha256."""
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


@contextlib.contextmanager
def _no_progress():
    yield lambda n: None


@dataclass
class RemoteExecutor(PullBackMixin):
    host: Host
    inventory: Inventory
    known_hosts: Path = DEFAULT_KNOWN_HOSTS
    accept_new_host_key: bool = False
    images: dict[str, str] = field(default_factory=dict)  # kit image name -> image reference on the host
    say: Callable[[str], None] = print
    conn: Connection | None = None
    _sftp: paramiko.SFTPClient | None = None
    lock: HostLock | None = None
    run_id: str | None = None
    code_dir: str | None = None
    redactor: Redactor = field(default_factory=Redactor)
    pull_stats: PullStats = field(default_factory=PullStats)
    progress: Callable[[str, int], Any] = field(default=lambda description, total: _no_progress())
    reconnect_attempts: int = RECONNECT_ATTEMPTS
    io_timeout_s: float = IO_TIMEOUT_S  # a silent dead link must not block a read for TCP's minutes
    max_pull_bytes: int = MAX_PULL_BYTES  # what one run may bring back in all
    run_pulled_bytes: int = 0
    unpulled: dict[str, str] = field(default_factory=dict)  # step -> remote dir, until its files are back and verified
    kept_reasons: list[str] = field(default_factory=list)  # why the host's run directory must stay
    stopping: bool = False  # a step is being ended after Ctrl-C/SIGTERM: STOP no longer interrupts the pull-back
    models_present: bool = False  # the host has its models_dir (then containers mount it read-only)

    # -- connection ---------------------------------------------------------------------------
    def connect(self, retries: int | None = None) -> None:
        conn = connection_for(self.host, self.inventory, self.known_hosts, self.accept_new_host_key, self.say)
        self.conn = open_connection(conn, say=self.say) if retries is None else open_connection(conn, retries, self.say)
        self._sftp = None

    def reconnect(self) -> None:
        """Reopen after a drop, with backoff; transient failures only."""
        delay_s = 1.0
        last: Exception | None = None
        for _ in range(self.reconnect_attempts):
            try:
                self.close_connection()
                self.connect(retries=1)
                return
            except HostError as exc:
                last = exc
                time.sleep(delay_s)
                delay_s = min(delay_s * 2, 8)
        raise ConnectionLost(f"host '{self.host.name}': lost the connection and could not reconnect: {last}")

    def check_stop(self) -> None:
        """End this thread's step like Ctrl-C when the process was told to stop (signals reach the main thread only)."""
        if STOP.is_set() and not self.stopping:
            raise KeyboardInterrupt

    def close_connection(self) -> None:
        for closer in (self._sftp, self.conn):
            try:
                if closer is not None:
                    closer.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        self._sftp = None

    @property
    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            assert self.conn is not None
            self._sftp = self.conn.client.open_sftp()
            self._sftp.get_channel().settimeout(self.io_timeout_s)
        return self._sftp

    def sh(self, command: str, timeout_s: float | None = None, check: bool = True, retry: bool = True) -> tuple[int, str, str]:
        """Run a short management command (bounded by the I/O timeout unless told otherwise); steps run detached.

        Commands here are idempotent, so one dropped connection is survived by reconnecting and running it again.
        """
        assert self.conn is not None
        try:
            result = self.conn.run(command, hide=True, warn=True, in_stream=False,
                                   timeout=timeout_s if timeout_s is not None else self.io_timeout_s)
        except CommandTimedOut:  # not retried here: the command may have run (a step's launch must not run twice)
            raise TimeoutError(f"`{command.split()[0]}` got no answer within the I/O timeout") from None
        except (OSError, EOFError, paramiko.SSHException) as exc:
            if not retry:
                raise
            self.say(f"      connection to {self.host.name} dropped ({type(exc).__name__}); reconnecting")
            self.reconnect()
            return self.sh(command, timeout_s, check, retry=False)
        if check and result.exited != 0:
            raise HostError(self._explain(f"`{command.split()[0]}` failed", result.stderr or result.stdout))
        return result.exited, result.stdout, result.stderr

    def _explain(self, what: str, detail: str) -> str:
        detail = detail.strip().splitlines()[-1] if detail.strip() else ""
        if "No space left on device" in detail or "Disk quota exceeded" in detail:
            return (f"host '{self.host.name}': no space left in {self.host.workdir} ({detail});"
                    " free space there or set a larger `workdir` for the host")
        return f"host '{self.host.name}': {what}: {detail}"

    # -- lock-fs for HostLock -----------------------------------------------------------------
    def mkdir_exclusive(self, path: str) -> bool:
        code, _, err = self.sh(f"mkdir {shell.quote(path)}", check=False, retry=False)
        if code != 0 and "File exists" not in err:
            raise HostError(self._explain(f"cannot create {path}", err))
        return code == 0

    def write_text(self, path: str, text: str) -> None:
        with self.sftp.open(path, "w") as fh:
            fh.write(text.encode())

    def read_text(self, path: str) -> str | None:
        """The file's text, or None when it is missing or unreadable; a broken connection raises."""
        try:
            with self.sftp.open(path, "r") as fh:
                return fh.read(SMALL_FILE_MAX_BYTES).decode(errors="replace")  # the host decides its size: bound it
        except (FileNotFoundError, PermissionError):
            return None

    def remove_tree(self, path: str) -> None:
        self.sh(f"rm -rf -- {shell.quote(path)}")

    def age_s(self, path: str) -> float | None:
        """Seconds since ``path`` last changed, by the host's own clock (never this machine's)."""
        code, out, _ = self.sh(f"echo $(( $(date +%s) - $(stat -c %Y -- {shell.quote(path)}) ))", check=False)
        return float(out.strip()) if code == 0 and out.strip().lstrip("-").isdigit() else None

    # -- run lifecycle ------------------------------------------------------------------------
    @property
    def workdir(self) -> str:
        return self.host.workdir.rstrip("/")

    def run_dir(self, run_id: str) -> str:
        return f"{self.workdir}/runs/{run_id}"

    def prepare(self, run_id: str, secrets: dict[str, str] | None = None) -> None:
        """Connect, check the runtime, take the host's lock, ship the workload code."""
        self.run_id = run_id
        self.redactor = Redactor(list((secrets or {}).values()))
        self.secrets = dict(secrets or {})
        if self.conn is None:
            self.connect()
        try:
            self._prepare(run_id)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            problem = self._explain("cannot prepare the host", f"{type(exc).__name__}: {exc}")
            raise HostError(self._disk_problem(problem) if isinstance(exc, OSError) else problem) from None

    def _prepare(self, run_id: str) -> None:
        self.sh(f"mkdir -p -- {shell.path(self.workdir, 'runs')} {shell.path(self.workdir, 'code')}")
        if self.host.runtime == "docker":
            code, _, err = self.sh("docker version --format '{{.Server.Version}}'", check=False)
            if code != 0:
                raise HostError(f"host '{self.host.name}': runtime is docker but `docker version` failed: "
                                f"{err.strip().splitlines()[-1] if err.strip() else 'no output'}; run `invoke provision --host {self.host.name}`")
            for name, ref in sorted(self.images.items()):
                code, _, _ = self.sh(f"docker image inspect --format '{{{{.Id}}}}' {shell.quote(ref)}", check=False)
                if code != 0:
                    raise HostError(f"host '{self.host.name}': image '{name}' ({ref}) is not on the host; build it with"
                                    f" `invoke build --host {self.host.name}` (or pass --image {name}=REF of one that is)")
        self.sh(staging.cache_dirs_command(self.host))
        self.models_present = staging.host_path_exists(self, self.host.models_dir)
        self.lock = HostLock(self, self.host.name, f"{self.workdir}/lock", run_id)
        self.lock.acquire()
        try:
            self._ship_code()
            self.sh(f"mkdir -p -- {shell.quote(self.run_dir(run_id))}")
        except BaseException:
            self.lock.release()
            raise

    def _ship_code(self) -> None:
        data, digest = code_bundle()
        self.code_dir = f"{self.workdir}/code/{digest[:16]}"
        code_dir, complete = shell.quote(self.code_dir), shell.path(self.code_dir, ".complete")
        code, _, _ = self.sh(f"test -f {complete}", check=False)
        if code == 0:
            return
        tmp = f"{self.workdir}/code/.{digest[:16]}.tar.gz"
        try:
            with self.sftp.open(tmp, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise HostError(self._disk_problem(self._explain("cannot upload the workload code", str(exc) or "Failure"))) from None
        self.sh(f"rm -rf -- {code_dir} && mkdir -p -- {code_dir} && tar -xzf {shell.quote(tmp)} -C {code_dir}"
                f" && rm -f -- {shell.quote(tmp)} && touch -- {complete}")

    def finish(self, keep_remote: bool = False) -> None:
        """Release the lock; remove the host's run directory only when every step's files are back and verified."""
        try:
            if self.run_id and self.unpulled:
                self.say(f"      kept {self.run_dir(self.run_id)} on {self.host.name}: the files of"
                         f" {', '.join(sorted(self.unpulled))} are not all back; `invoke collect {self.run_id}` finishes")
            elif self.run_id and self.kept_reasons:
                self.say(f"      kept {self.run_dir(self.run_id)} on {self.host.name}: {'; '.join(self.kept_reasons)}")
            elif self.run_id and not keep_remote:
                self.sh(f"rm -rf -- {shell.quote(self.run_dir(self.run_id))}", check=False)
            if self.lock:
                self.lock.release()
        except (ReprokitError, OSError, EOFError, paramiko.SSHException) as exc:
            self.say(f"      could not clean up on {self.host.name} ({exc}); its lock may stay: `invoke unlock --host {self.host.name}`")
        finally:
            self.close_connection()

    # -- one workload --------------------------------------------------------------------------
    def stage_inputs(self, step_name: str, out_dir: Path, files: list) -> list:
        """Upload a step's input files before it starts (staging.py); the workload gets the returned paths."""
        assert self.run_id
        return staging.stage_remote(self, f"{self.run_dir(self.run_id)}/{step_name}", files)

    def host_path_exists(self, path: str) -> bool:
        return staging.host_path_exists(self, path)

    def container_name(self, step_name: str) -> str:
        return f"{self.run_id}-{step_name}"

    def _workload_command(self, module: str, step_name: str, image: str | None, remote_dir: str) -> str:
        argv = ["-m", module, "--params", "params.json", "--out-dir", "."]
        if self.host.runtime == "native":
            return shell.join(["env", f"PYTHONPATH={self.code_dir}", "PYTHONUNBUFFERED=1",
                               *staging.cache_env(self.host, ("REPROKIT_CACHE",)), self.host.python, *argv])
        if not image:
            raise HostError(f"host '{self.host.name}' runs workloads in Docker, but the step names no image")
        ref = self.images.get(image)
        if not ref:
            raise HostError(f"host '{self.host.name}': no image reference for '{image}'; build it (`invoke build --host"
                            f" {self.host.name}`) or pass --image {image}=REF")
        docker = [
            "docker", "run", "--rm", "--name", self.container_name(step_name), "--label", f"reprokit.run={self.run_id}",
            "--ipc=host", f"--shm-size={self.host.container_shm_size}",
            *[arg for name, value in self.host.container_ulimits for arg in ("--ulimit", f"{name}={value}")],
            "--user", "$(id -u):$(id -g)", "-v", f"{remote_dir}:/out", "-v", f"{self.code_dir}:/opt/reprokit:ro",
            "-w", "/out", "-e", "PYTHONPATH=/opt/reprokit", "-e", "PYTHONUNBUFFERED=1",
            "-e", "HOME=/tmp",  # the host's uid may have no home in the image; the caches are mounted below
            *staging.container_mounts(self.host, self.models_present),
        ]
        if not self.host.cpu_only:
            docker += ["--gpus", "all"]
        if self.secrets:
            docker += ["--env-file", "/dev/fd/3"]  # the wrapper opened .secrets.env there and deleted it
        docker += [ref, "python3", "-m", module, "--params", "/out/params.json", "--out-dir", "/out"]
        return " ".join(a if a == "$(id -u):$(id -g)" else shell.quote(a) for a in docker)

    def _wrapper(self, command: str, step_name: str, timeout_s: float) -> str:
        cleanup = ""
        if self.host.runtime == "docker":
            cleanup = f"docker rm -f {shell.quote(self.container_name(step_name))} >/dev/null 2>&1\n"
        return (
            "#!/bin/sh\n"
            "# Written by reprokit: runs one step detached from the SSH session.\n"
            'cd "$(dirname "$0")" || exit 1\n'
            "echo $$ > pid\n"
            "if [ -f .secrets.sh ]; then set -a; . ./.secrets.sh; set +a; rm -f .secrets.sh; fi\n"
            # docker reads its --env-file from this descriptor: the file is gone before any container starts
            "if [ -f .secrets.env ]; then exec 3< .secrets.env; rm -f .secrets.env; fi\n"
            f"timeout --kill-after={KILL_AFTER_S} {int(timeout_s)} {command} > step.log 2>&1 < /dev/null\n"
            "rc=$?\n"
            "exec 3<&-\n"
            f"{cleanup}"
            # a finished step leaves nothing behind: end what it started in this session (all but this shell)
            'for p in $(pgrep -s $$); do [ "$p" = "$$" ] || kill -KILL "$p" 2>/dev/null; done\n'
            # overwrite the placeholder in place: this needs no new disk space, so it works on a full disk too
            "printf '%-7s\\n' \"$rc\" 1<> exit_code\n"
        )

    def _put_private(self, path: str, text: str) -> None:
        """Create a file readable by the SSH user alone, mode 0600 before any byte is written."""
        with self.sftp.open(path, "wx") as fh:
            fh.chmod(0o600)
            fh.write(text.encode())

    def run_workload(
        self,
        module: str,
        params: dict[str, Any],
        out_dir: Path,
        log_path: Path,
        timeout_s: float,
        on_line: Callable[[str], None] | None = None,
        image: str | None = None,
        step_name: str | None = None,
    ) -> WorkloadRun:
        assert self.run_id and self.code_dir
        step_name = step_name or out_dir.name
        remote_dir = f"{self.run_dir(self.run_id)}/{step_name}"
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out_dir / "params.json", params)
        command = self._workload_command(module, step_name, image, remote_dir)
        LOG.debug("host %s: step %s: %s", self.host.name, step_name, command)  # --verbose; secrets go by file, never here
        try:
            self.sh(f"mkdir -p -- {shell.quote(remote_dir)}")
            with self.sftp.open(f"{remote_dir}/params.json", "w") as fh:
                fh.write((out_dir / "params.json").read_bytes())
            if self.secrets:
                native = self.host.runtime == "native"
                self._put_private(f"{remote_dir}/{'.secrets.sh' if native else '.secrets.env'}",
                                  env_file_text(self.secrets, for_shell=native))
            with self.sftp.open(f"{remote_dir}/exit_code", "w") as fh:
                fh.write(EXIT_PLACEHOLDER)
            with self.sftp.open(f"{remote_dir}/run.sh", "w") as fh:
                fh.write(self._wrapper(command, step_name, timeout_s).encode())
            # setsid -f: the step gets its own session and outlives this SSH channel, which closes at once
            self.sh(f"cd -- {shell.quote(remote_dir)} && setsid -f sh run.sh >/dev/null 2>&1 < /dev/null")
            self.unpulled[step_name] = remote_dir  # from now on the host holds results until they are back
        except OSError as exc:
            raise HostError(self._disk_problem(self._explain(f"cannot start step '{step_name}'", str(exc) or "Failure"))) from None
        started = time.monotonic()
        try:
            exit_code = self._follow(remote_dir, step_name, timeout_s, started, on_line)
        except KeyboardInterrupt:
            self.stopping = True  # what the stopped step wrote still comes back
            self._stop_quietly(remote_dir, step_name)
            self._pull_quietly(remote_dir, out_dir, step_name)
            raise
        except ConnectionLost as exc:
            raise Detached(f"{exc}; step '{step_name}' goes on on the host", step_name, remote_dir) from None
        duration = time.monotonic() - started
        listing = self._pull_step(remote_dir, out_dir, step_name)
        if log_path != out_dir / "step.log" and (out_dir / "step.log").exists():
            (out_dir / "step.log").replace(log_path)
        result, problem = read_result(out_dir)
        timed_out = exit_code in (124, 137) and result is None
        if problem and not timed_out:
            problem = self._disk_problem(problem)
        return WorkloadRun(exit_code=None if timed_out else exit_code, timed_out=timed_out,
                           duration_s=round(duration, 3), result=result, result_problem=problem,
                           not_pulled=listing.not_pulled)

    def _pull_step(self, remote_dir: str, out_dir: Path, step_name: str):
        """Pull a finished step; a stop or a lost host leaves its files on the host for ``invoke collect``."""
        try:
            listing = self.pull(remote_dir, out_dir)
        except ConnectionLost as exc:
            raise Detached(f"{exc}; step '{step_name}' ended, its files stay on the host", step_name, remote_dir) from None
        except PullStopped as exc:
            raise PullIncomplete(str(exc), step_name, remote_dir) from None
        del self.unpulled[step_name]
        if listing.not_pulled:
            self.kept_reasons.append(f"{len(listing.not_pulled)} entries of step '{step_name}' could not be pulled"
                                     " (listed in the manifest)")
        return listing

    def _disk_problem(self, problem: str) -> str:
        """``problem``, and what to do when the host's workdir is full (SFTP only says "Failure" then)."""
        try:
            code, out, _ = self.sh(f"df -Pk -- {shell.quote(self.workdir)} | tail -1", check=False)
        except (ReprokitError, OSError, EOFError, paramiko.SSHException):
            return problem
        fields = out.split()
        if code == 0 and len(fields) >= 4 and fields[3] == "0":
            return f"{problem}; host '{self.host.name}' has no space left in {self.workdir}"
        return problem

    def _follow(self, remote_dir: str, step_name: str, timeout_s: float, started: float,
                on_line: Callable[[str], None] | None) -> int:
        """Stream step.log until exit_code appears; reconnect on drops; end the step if it overruns."""
        offset = 0
        pending = b""
        deadline = started + timeout_s + KILL_AFTER_S + REMOTE_GRACE_S
        next_liveness = started + LIVENESS_EVERY_S
        poll_s = POLL_MIN_S
        while True:
            try:
                before = offset
                offset, pending = self._stream(f"{remote_dir}/step.log", offset, pending, on_line)
                poll_s = POLL_MIN_S if offset != before else min(POLL_MAX_S, poll_s * 2)
                code = self.exit_code(remote_dir)
                if code is not None:
                    self._stream(f"{remote_dir}/step.log", offset, pending + b"\n" if pending else b"", on_line)
                    return code
                if time.monotonic() > deadline:
                    self._stop(remote_dir, step_name)
                    return 124
                if time.monotonic() > next_liveness:
                    next_liveness = time.monotonic() + LIVENESS_EVERY_S
                    if not self._session_alive(remote_dir) and self.exit_code(remote_dir) is None:
                        return -1  # the wrapper died without writing its exit code (e.g. killed by the host)
            except (OSError, EOFError, paramiko.SSHException) as exc:
                if not _is_transient(exc) and not isinstance(exc, (EOFError, paramiko.SSHException)):
                    raise
                self.say(f"      connection to {self.host.name} lost during '{step_name}' ({type(exc).__name__}); reconnecting")
                self.reconnect()
            self.check_stop()
            time.sleep(poll_s)

    def exit_code(self, remote_dir: str) -> int | None:
        """The step's exit code, or None while it runs."""
        text = (self.read_text(f"{remote_dir}/exit_code") or "").strip()
        return int(text) if text.lstrip("-").isdigit() else None

    def _session_alive(self, remote_dir: str) -> bool:
        pid = (self.read_text(f"{remote_dir}/pid") or "").strip()
        if not pid.isdigit():
            return True  # not started yet
        code, _, _ = self.sh(f"pgrep -s {pid} >/dev/null", check=False)
        return code == 0

    def _stream(self, path: str, offset: int, pending: bytes, on_line) -> tuple[int, bytes]:
        try:
            size = self.sftp.stat(path).st_size
        except FileNotFoundError:
            return offset, pending
        if size <= offset:
            return offset, pending
        with self.sftp.open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(min(size - offset, STREAM_READ_BYTES))  # a fast-growing log comes in bounded pieces
        offset += len(data)
        pending += data
        *lines, pending = pending.split(b"\n")
        if len(pending) > STREAM_READ_BYTES:  # a "line" without end is shown in pieces, never held whole
            lines.append(pending)
            pending = b""
        if on_line:
            for line in lines:
                on_line(self.redactor(line.decode("utf-8", errors="replace")))
        return offset, pending

    def _stop(self, remote_dir: str, step_name: str) -> None:
        """End every process of the step's session on the host (TERM, then KILL) and remove its container.

        The session, not the process group: GNU ``timeout`` moves itself and the workload into a group of their own.
        """
        pid = (self.read_text(f"{remote_dir}/pid") or "").strip()
        if pid.isdigit():
            self.sh(f"pkill -TERM -s {pid}; kill -TERM -- -{pid}; sleep 2; pkill -KILL -s {pid}; kill -KILL -- -{pid}; true",
                    check=False)
        if self.host.runtime == "docker":
            self.sh(f"docker rm -f {shell.quote(self.container_name(step_name))} >/dev/null 2>&1; true", check=False)
        self.sh(f"rm -f -- {shell.path(remote_dir, '.secrets.env')} {shell.path(remote_dir, '.secrets.sh')}", check=False)
        if self.exit_code(remote_dir) is None:
            self.write_text(f"{remote_dir}/exit_code", "130\n")

    def _stop_quietly(self, remote_dir: str, step_name: str) -> None:
        try:
            self._stop(remote_dir, step_name)
        except (ReprokitError, OSError, EOFError, paramiko.SSHException) as exc:
            self.say(f"      could not end step '{step_name}' on {self.host.name}: {exc}")

    def _pull_quietly(self, remote_dir: str, out_dir: Path, step_name: str) -> None:
        """Bring back what a stopped step wrote; on any failure the host keeps it (``unpulled``) for ``invoke collect``."""
        try:
            self.pull(remote_dir, out_dir)
            del self.unpulled[step_name]
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - best effort while stopping
            self.say(f"      could not bring back {remote_dir} ({type(exc).__name__}: {exc}); it stays on the host")


__all__ = ["RemoteExecutor", "Detached", "code_bundle"]
