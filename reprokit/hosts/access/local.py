"""This machine as a host: short commands in a subprocess, files in place, a step's directory copied home.

The local host is reached like any other (``base.Connection``), so its steps run through the same launcher
(a detached session: its own ``timeout``, its Ctrl-C and ``STOP`` handling, its reap) and the same runtimes,
Docker included. Its work directory is in the runs directory (``<runs>/.hosts/<name>``), never the inventory's
``workdir``, which names a GPU host's directory. The copy home trusts the step's directory no more than a
remote one: the same host-side listing (``hostside.py``), a name that holds a secret withheld (listed masked, as a
remote pull-back does), each file opened component by component without following links, and only while it is the
file the listing saw.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import hostside
from reprokit.hosts.access.base import CommandResult
from reprokit.hosts.access.local_command import run_streamed
from reprokit.hosts.explain import explain_failure
from reprokit.hosts.pull_listing import (
    Listing,
    PullStopped,
    local_target,
    parse_listing,
    too_long_here,
    withhold_secret_names,
)
from reprokit.hosts.transport import SMALL_FILE_MAX_BYTES
from reprokit.output.say import Say, silent
from reprokit.output.secrets import Redactor
from reprokit.workloads.static_smem.wheel import default_cache_dir

COPY_CHUNK_BYTES = 1 << 20
LOCAL_IO_TIMEOUT_S = 30.0


def local_workdir(runs_dir: Path, host_name: str) -> str:
    """Where a local host keeps its runs, code and lock: beside the records, never the inventory's path."""
    return str((runs_dir / ".hosts" / host_name).resolve())


def this_machines_cache_dir(host: Host) -> str | None:
    """The caches' root a step on this machine uses: the inventory's ``cache_dir``, else the one this machine's
    reprokit cache lives in (``$XDG_CACHE_HOME`` or ``~/.cache``, whose ``reprokit/`` holds the wheels and compiled
    probes), so local runs keep their warm caches; None (the work directory's) when ``$REPROKIT_CACHE`` names another."""
    if host.cache_dir:
        return host.cache_dir
    reprokit_cache = default_cache_dir()
    return str(reprokit_cache.parent) if reprokit_cache.name == "reprokit" else None


@contextlib.contextmanager
def _no_progress(description: str, total: int):
    yield lambda n: None


@dataclass
class LocalPull:
    """A step's directory on this machine into its record, with the checks of a remote pull-back."""

    host: Host
    max_pull_bytes: int
    max_pull_files: int
    redactor: Redactor = field(default_factory=Redactor)
    check_stop: Callable[[], None] = lambda: None
    progress: Callable[[str, int], Any] = _no_progress
    run_pulled_bytes: int = 0
    run_pulled_files: int = 0

    def pull(self, remote_dir: str, out_dir: Path, on_bytes: Callable[[int], None] | None = None) -> Listing:
        out_dir.mkdir(parents=True, exist_ok=True)
        listing = too_long_here(withhold_secret_names(self._listing(remote_dir), self.redactor), out_dir)
        total = sum(f.size for f in listing.files)
        if self.run_pulled_bytes + total > self.max_pull_bytes:
            raise PullStopped(f"host '{self.host.name}': {out_dir.name} has {total} bytes to bring back; with the"
                              f" {self.run_pulled_bytes} already pulled that passes this run's cap of"
                              f" {self.max_pull_bytes} bytes (--max-pull-bytes); the files stay in {remote_dir}")
        if self.run_pulled_files + len(listing.files) > self.max_pull_files:
            raise PullStopped(f"host '{self.host.name}': {remote_dir} lists {len(listing.files)} files; that passes this"
                              f" run's cap of {self.max_pull_files} files (config reprokit.max_pull_files)")
        copied = []
        for remote in listing.files:
            self.check_stop()
            reason = self._copy(remote_dir, remote.rel, (remote.dev, remote.ino), local_target(out_dir, remote.rel))
            if reason:
                listing.not_pulled.append({"path": remote.rel, "reason": reason})
                continue
            copied.append(remote)
            if on_bytes:
                on_bytes(remote.size)
        listing.files = copied
        self.run_pulled_bytes += sum(f.size for f in copied)
        self.run_pulled_files += len(copied)
        for remote in copied:
            self.redactor.file(out_dir / remote.rel)
        return listing

    def _listing(self, remote_dir: str) -> Listing:
        """The host-side lister's own listing (the one a remote host runs), checked entry by entry."""
        done = subprocess.run([sys.executable, hostside.__file__, "list", remote_dir], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=LOCAL_IO_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise PullStopped(f"host '{self.host.name}': cannot list {remote_dir}:"
                              f" {done.stderr.decode(errors='replace').strip()[-300:] or 'no output'}")
        return parse_listing(done.stdout.decode("utf-8", errors="replace"), f"host '{self.host.name}'")

    @staticmethod
    def _copy(remote_dir: str, rel: str, identity: tuple[int, int], target: Path) -> str | None:
        """Copy one listed file, unless it is no longer the regular file listed; why not, or None."""
        try:
            fd = hostside.open_inside(remote_dir, rel)
        except OSError as exc:
            return f"cannot open it ({exc.strerror})"
        with os.fdopen(fd, "rb") as src:
            info = os.fstat(src.fileno())
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != identity:
                return "it changed after it was listed"
            with open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, COPY_CHUNK_BYTES)
        return None


@dataclass
class LocalConnection:
    """The ``Connection`` to this machine."""

    reaches_this_machine: ClassVar[bool] = True

    host: Host
    say: Say = silent
    io_timeout_s: float = LOCAL_IO_TIMEOUT_S
    reconnect_attempts: int = 0

    @classmethod
    def open_for(cls, host: Host, inventory: Any, options: Any, say: Say = silent, runs_dir: Path = Path("runs")
                 ) -> LocalConnection:
        return cls(replace(host, workdir=local_workdir(runs_dir, host.name), cache_dir=this_machines_cache_dir(host)), say)

    @property
    def is_open(self) -> bool:
        return True

    def connect(self, retries: int | None = None) -> None:
        """Nothing to open on this machine."""

    def reconnect(self) -> None:
        """Nothing drops on this machine."""

    def close(self) -> None:
        """Nothing to close."""

    def sh(self, command: str, timeout_s: float | None = None, check: bool = True,
           retry: bool = True) -> tuple[int, str, str]:
        try:
            done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, errors="replace",
                                  stdin=subprocess.DEVNULL, timeout=timeout_s or self.io_timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"`{command.split()[0]}` got no answer within the I/O timeout") from None
        if check and done.returncode != 0:
            raise HostError(self.explain(f"`{command.split()[0]}` failed", done.stderr or done.stdout))
        return done.returncode, done.stdout, done.stderr

    def stream(self, argv: Sequence[str], *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
               timeout_s: float | None = None, on_line: Callable[[str], None] | None = None) -> CommandResult:
        return run_streamed(argv, stdin=stdin, env=env, timeout_s=timeout_s, on_line=on_line)

    def write_bytes(self, path: str, data: bytes) -> None:
        Path(path).write_bytes(data)

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode())

    def write_private(self, path: str, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode())

    def put_file(self, source: Path, path: str) -> None:
        shutil.copyfile(source, path)

    def read_text(self, path: str) -> str | None:
        try:
            with open(path, "rb") as fh:
                return fh.read(SMALL_FILE_MAX_BYTES).decode(errors="replace")
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            return None

    def read_chunk(self, path: str, offset: int, max_bytes: int) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                fh.seek(offset)
                return fh.read(max_bytes)
        except FileNotFoundError:
            return None

    def path_exists(self, path: str) -> bool:
        return Path(path).exists()

    def mkdir_exclusive(self, path: str) -> bool:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path)
            return True
        except FileExistsError:
            return False

    def remove_tree(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def age_s(self, path: str) -> float | None:
        try:
            return time.time() - os.stat(path).st_mtime
        except OSError:
            return None

    def explain(self, what: str, detail: str) -> str:
        return explain_failure(self.host, what, detail)

    def disk_problem(self, problem: str) -> str:
        try:
            free = shutil.disk_usage(self.host.workdir).free
        except OSError:
            return problem
        return f"{problem}; this machine has no space left in {self.host.workdir}" if free == 0 else problem

    def python_path(self) -> tuple[str, ...]:
        return tuple(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))

    def is_this_machine(self) -> bool:
        return True

    def dropped(self, exc: BaseException) -> bool:
        """No link to drop: an error on this machine is the error."""
        return False

    def pull_back(self, max_pull_bytes: int, max_pull_files: int) -> LocalPull:
        return LocalPull(self.host, max_pull_bytes, max_pull_files)


__all__ = ["LocalConnection", "LocalPull", "local_workdir"]
