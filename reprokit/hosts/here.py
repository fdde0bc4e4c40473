"""One workload on this machine, for a front end that is not a kit run (``invoke smem``, ``bisect``, the fit table).

It goes through the one executor, as a run's step does: this machine's access, the session launcher (its own
``timeout``, Ctrl-C ends it and what it started, its files come back checked) and the native runtime. The host's
side of it (the shipped code, the step's directory, the lock) lives in a temporary directory that goes with the call,
so these commands never contend for the lock of the ``local`` host a kit run holds.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Inventory, local_host
from reprokit.errors import ConfigError, HostError, ReprokitError, StepError
from reprokit.hosts.executor import WorkloadRun
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.launch import StepSpec
from reprokit.workloads.facts.exits import Exit

HERE_TIMEOUT_S = 6 * 3600  # a front end's analysis (a fit-table cell, a bisect step) has no kit to give it one

# What a front end raises when its one workload ended with this exit code (its exit code is the error's: errors.py)
ERROR_OF_EXIT: dict[int, type[ReprokitError]] = {
    Exit.BAD_PARAMS: ConfigError,
    Exit.MISSING_DEPENDENCY: HostError,  # nvcc or the wheel is missing on this machine
}


def error_for(run: WorkloadRun) -> type[ReprokitError]:
    """The error of a workload that did not end OK (a check that failed, a crash, a timeout: ``StepError``)."""
    return ERROR_OF_EXIT.get(run.exit_code if run.exit_code is not None else -1, StepError)


def run_here(module: str, params: dict[str, Any], out_dir: Path, name: str,
             on_line: Callable[[str], None] | None = None, timeout_s: float = HERE_TIMEOUT_S) -> WorkloadRun:
    """Run ``module`` on this machine with ``params``; its files come back into ``out_dir`` (``step.log`` included)."""
    host = local_host()
    with tempfile.TemporaryDirectory(prefix="reprokit-here-") as runs:
        executor = executor_for(host, Inventory(path=None, hosts={host.name: host}), Path(runs), ConnectOptions())
        executor.connect()
        executor.prepare(f"{name}-{secrets.token_hex(4)}")
        try:
            return executor.run_step(StepSpec(module, params, out_dir, out_dir / "step.log", timeout_s, name,
                                              on_line=on_line))
        finally:
            executor.finish()


__all__ = ["ERROR_OF_EXIT", "HERE_TIMEOUT_S", "error_for", "run_here"]
