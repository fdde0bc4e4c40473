"""A planned step's inputs made real: its host paths checked, its declared inputs resolved and staged on the host.

Planning ends here: the workload's parameters then name the staged files' host-side paths, never this machine's,
and a step whose model or input is missing is planned out with the reason (``skip_reason``).
"""

from __future__ import annotations

from pathlib import Path

from reprokit.hosts.executor import Executor
from reprokit.plan.inputs import resolve_inputs
from reprokit.plan.planner import PlannedStep
from reprokit.records.models import StepEntry


def stage_inputs(planned: PlannedStep, executor: Executor, steps: dict[str, StepEntry], record_dir: Path,
                 out_dir: Path) -> None:
    """Check the step's host paths, resolve its declared inputs and stage them on the host (or say why not)."""
    host = executor.host
    for param, path, variable in planned.host_paths:
        if not executor.host_path_exists(path):
            name = path.rsplit("/", 1)[-1]
            fix = (f"pass where it is: --set {planned.name}.{param}=/path/to/{name}" if host.is_local else  # no inventory entry
                   f"set `{variable}` for the host in inventory.yml (now {getattr(host, variable)}) to the directory"
                   f" that holds {name}")
            planned.skip_reason = f"not run: {param} {path} is not on host '{host.name}'; put it there, or {fix}"
            return
    files, reason = resolve_inputs(planned.kind, planned.params, steps, record_dir)
    if reason:
        planned.skip_reason = reason
        return
    if planned.kind.where == "control":  # control steps read the record itself
        staged = [(f, str(f.source)) for f in files]
    else:
        staged = executor.stage_inputs(planned.name, out_dir, files)
    for spec in planned.kind.inputs:
        paths = [path for f, path in staged if f.param == spec.param]
        if paths:
            planned.params[spec.param] = paths if planned.kind.where == "control" else paths[0]
    planned.inputs = [f.describe(path) for f, path in staged]
