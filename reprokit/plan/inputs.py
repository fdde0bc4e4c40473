"""Resolve a step's declared inputs (``StepKind.inputs``) to files on the control machine.

An input from an earlier step is that step's file in the run record (pulled back and verified); an input
from the control machine is an artifact of its cache. The executor then stages each file on the host and
gives the workload the host-side path: no control-machine path ever reaches a host. A missing input from an
earlier step is the reason the step does not run, naming the input; a control-machine artifact that cannot
be had is left to the workload, whose own error says which file to put where.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.records.digests import DIGESTS
from reprokit.records.inputs import InputFile
from reprokit.records.models import StepEntry, StepStatus
from reprokit.step_kinds import StepInput, StepKind
from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem import wheel as flashinfer_wheel


def _file(param: str, path: Path, origin: str, keep_on_host: bool) -> InputFile:
    return InputFile(param, path, DIGESTS.sha256_of(path), path.stat().st_size, origin, keep_on_host)


def producer(spec: StepInput, params: dict[str, Any], steps: dict[str, StepEntry]) -> str | None:
    """The earlier step that produces ``spec``: the one ``step_param`` names, else the last of kind ``from_step``."""
    if spec.step_param and params.get(spec.step_param):
        return str(params[spec.step_param])
    names = [name for name, entry in steps.items() if entry.uses == spec.from_step]
    return names[-1] if names else None


def from_step(spec: StepInput, params: dict[str, Any], steps: dict[str, StepEntry],
              record_dir: Path) -> tuple[list[InputFile], str | None]:
    what = f"input '{spec.param}' ({spec.summary})"
    name = producer(spec, params, steps)
    if name is None:
        return [], None if spec.optional else f"not run: {what} has no producer: no '{spec.from_step}' step runs before it"
    entry = steps.get(name)
    if entry is None:
        return [], f"not run: {what} is missing: no step '{name}' ran before it"
    if entry.status != StepStatus.OK:
        reason = entry.reason or ""
        detail = reason if reason.startswith("not run: ") else f"{entry.status}: {reason}" if reason else entry.status
        return [], f"not run: {what} is missing: step '{name}' did not produce it ({detail})"
    step_dir = record_dir / "steps" / name
    paths = sorted({p for pattern in spec.files for p in step_dir.glob(pattern) if p.is_file()})
    if not paths:
        return [], f"not run: {what} is missing: step '{name}' left no {' or '.join(spec.files)} in {step_dir}"
    return [_file(spec.param, p, f"step {name}: {p.relative_to(step_dir).as_posix()}", False) for p in paths], None


def flashinfer_wheel_file(params: dict[str, Any]) -> Path | None:
    """The pinned flashinfer-python wheel from the control machine's cache, downloaded there once if need be."""
    return pinned_wheel_file(flashinfer_wheel.PACKAGE, params.get("flashinfer"))


def pinned_wheel_file(package: str | None, version: str | None) -> Path | None:
    """A pure-Python wheel of a pinned package from the control machine's cache, downloaded there once if need be."""
    if not package or not version:
        return None
    cache = flashinfer_wheel.default_cache_dir() / "wheels"
    cached = cache / flashinfer_wheel.wheel_file_name(str(version), str(package))
    if cached.is_file():
        return cached
    try:
        return flashinfer_wheel.download(str(package), str(version), cache)
    except WorkloadError:
        return None  # the host may have it; if not, the workload says which file to put where


CONTROL_ARTIFACTS = {
    "flashinfer-wheel": flashinfer_wheel_file,
    "sglang-wheel": lambda params: pinned_wheel_file("sglang", params.get("sglang")),
    "package-wheel": lambda params: pinned_wheel_file(params.get("package"), params.get("version")),
}


def resolve_inputs(kind: StepKind, params: dict[str, Any], steps: dict[str, StepEntry],
                   record_dir: Path) -> tuple[list[InputFile], str | None]:
    """The files to stage for a step of ``kind``, or the reason it cannot run (naming the missing input)."""
    files: list[InputFile] = []
    for spec in kind.inputs:
        if spec.from_step:
            found, reason = from_step(spec, params, steps, record_dir)
            if reason:
                return [], reason
            files += found
        elif spec.from_control:
            path = CONTROL_ARTIFACTS[spec.from_control](params)
            if path is not None:
                files.append(_file(spec.param, path, f"control cache: {path.name}", True))
    return files, None
