"""Executors run one workload on a host and bring back its result.

The runner is typed against ``Executor``, one life cycle: ``connect`` (fails before anything is written),
``prepare(run_id, secrets)`` (takes the host's lock), any number of ``stage_inputs`` / ``run_step`` calls (each a
``StepSpec``, ``launch.py``), and ``finish``. One class implements it for every host (``host_executor.py``): this
machine is reached through ``access/local.py`` and launched like an SSH host, so a local step is stopped by
Ctrl-C or a group's ``STOP`` the same way, and runs in Docker the same way.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import reprokit
from reprokit.config.inventory import Host
from reprokit.hosts.host_lock import HostLock
from reprokit.hosts.launch import Handle, StepSpec

LOG = logging.getLogger(__name__)  # debug lines: shown under --verbose (reprokit.output.verbosity)

PACKAGE_ROOT = Path(reprokit.__file__).resolve().parent.parent


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

    def close_connection(self) -> None:
        """Close the host's connection (after ``connect`` alone: an unlock)."""

    def attach(self, run_id: str) -> None:
        """Reach the host of a run started earlier (``invoke collect``): its steps are found by their handles."""

    def prune(self, run_id: str) -> str:
        """Remove the host's copy of a finished run; the directory removed."""

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


__all__ = ["PACKAGE_ROOT", "Executor", "WorkloadRun", "read_result", "workload_argv"]
