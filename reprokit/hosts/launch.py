"""The launcher seam: how a step is started, watched, stopped and collected on its host (any access).

Where a step runs is three separate questions, each answered by name from the inventory (as ReFrame separates
scheduler, launcher and container platform): the *access* (this machine, an SSH host, a Slurm login node:
``access/``), the *runtime* that builds the workload's command (native, docker, the cluster's container tool:
``runtimes/``), and the *launcher* whose protocol is here, that runs that command: a detached session on the host
(``launchers/session.py``) or a batch job through the scheduler (``launchers/slurm.py``). The executor above
speaks only to this protocol; the ``Handle`` a launch returns (a session's pid, a job id) is data in the run record,
so ``invoke collect``, ``status``, ``logs`` and ``cancel`` find the step again through the same launcher, on any host.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts.pullback import Listing
from reprokit.records.models import RunStatus

STOP = threading.Event()  # set by a signal handler (e.g. of a --group fan-out): every executor ends its step


@dataclass(frozen=True)
class StepSpec:
    """One workload to run: what the runner asks of any executor (local or remote, any launcher)."""

    module: str
    params: dict[str, Any]
    out_dir: Path
    log_path: Path
    timeout_s: float
    name: str
    image: str | None = None
    on_line: Callable[[str], None] | None = None  # each line of the step's log as it comes
    on_launch: Callable[[Handle], None] | None = None  # the handle, once the step is launched (for the record)


@dataclass(frozen=True)
class Handle:
    """How to find a launched step again: its launcher, its id there, its directory on the host."""

    launcher: str  # a key of ``launchers.LAUNCHERS``
    id: str  # the session leader's pid (once known), or the Slurm job id
    remote_dir: str

    def to_json(self) -> dict[str, str]:
        return {"launcher": self.launcher, "id": self.id, "remote_dir": self.remote_dir}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, remote_dir: str) -> Handle:
        """The record's handle; a record written before handles existed had a detached session."""
        if not data:
            return cls("session", "", remote_dir)
        return cls(str(data.get("launcher") or "session"), str(data.get("id") or ""), str(data.get("remote_dir") or remote_dir))


@dataclass
class StepEnd:
    """How a launched step ended, as its launcher saw it."""

    exit_code: int | None  # the workload's own exit code; None when it wrote none
    timed_out: bool = False  # ended for its time limit (the session's `timeout`, Slurm's TIMEOUT)
    reason: str | None = None  # why it ended other than by itself (a node failure, a cancel by someone else, ...)
    facts: dict[str, Any] = field(default_factory=dict)  # what the manifest records of the launch (a job's id, nodes, ...)


class Detached(HostError):
    """The connection was lost while a step ran on the host; the step goes on there (``handle`` finds it again)."""

    status = RunStatus.DETACHED

    def __init__(self, message: str, step: str, remote_dir: str, handle: Handle | None = None):
        super().__init__(message)
        self.step = step
        self.remote_dir = remote_dir
        self.handle = handle or Handle("session", "", remote_dir)


class PullIncomplete(Detached):
    """A finished step's pull-back stopped (disk full, byte cap, damaged data); the host keeps its copy."""

    status = RunStatus.INCOMPLETE


class Launcher(Protocol):
    """Start a step and get a handle; poll it; follow its log to its end; stop it; bring its files back."""

    kind: str  # its key in ``launchers.LAUNCHERS``, written in each handle
    in_batch_job: bool  # each step runs as a scheduler's job (a runtime may then use the job's own srun)

    @staticmethod
    def lock_dir(host: Host) -> str:
        """Where the host's lock lives (``host_lock.py``) for runs through this launcher."""

    def launch(self, name: str, remote_dir: str, command: str, timeout_s: float, params: bytes,
               secrets: tuple[str, str] | None = None, cleanup: str = "") -> Handle:
        """Write the step's files in ``remote_dir`` and start ``command`` there; never waits for it to end.

        ``secrets``: a file name and its text (mode 0600, deleted before the workload starts); ``cleanup``: a shell
        command that ends what outlives the step (its container).
        """

    def poll(self, handle: Handle) -> StepEnd | None:
        """How the step ended, or None while it is queued or running."""

    def follow(self, handle: Handle, name: str, timeout_s: float, on_line: Callable[[str], None] | None,
               check_stop: Callable[[], None]) -> StepEnd:
        """Stream the step's log until it ends; reconnect on a dropped link; end it if it overruns."""

    def stop(self, handle: Handle) -> None:
        """End the step and whatever it started; a stopped step still has its files to collect."""

    def collect(self, handle: Handle, out_dir: Path) -> Listing:
        """Pull the step's directory into ``out_dir`` (verified, confined: ``pullback.py``)."""

    def reap(self, run_dir: str) -> int:
        """Kill whatever the run's steps left running on the host; how many of its processes are still there."""

    def usable_nodes(self) -> list[str] | None:
        """The nodes a run may fan out over (``--nodes``), or None when the launcher has no nodes to choose."""


__all__ = ["Detached", "Handle", "Launcher", "PullIncomplete", "STOP", "StepEnd", "StepSpec"]
