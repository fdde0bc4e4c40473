"""The step kinds a kit can use: one module per kind in this package, each defining ``KIND``.

Adding a kind is adding a module here (and its test): the registry finds it, and the kit schema, the
planner, ``invoke kits --check`` and the report read its declarations. ``base`` says what a kind declares. What it
draws in the reports, if anything, is its module of ``reprokit/report/kind_sections/``, found the same way.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from reprokit.step_kinds.base import (  # noqa: F401 - the package's names
    RESULT_JSON,
    HostPath,
    Number,
    Output,
    Part,
    PinParam,
    Result,
    ResultError,
    StepInput,
    StepKind,
    given,
)

NOT_KINDS = {"base"}


def discover(paths: Iterable[str] = __path__, package: str = __name__) -> dict[str, StepKind]:
    """Every kind module's ``KIND`` under ``paths``, in the kinds' declared order; checks what they declare."""
    kinds: list[StepKind] = []
    problems = []
    for info in pkgutil.iter_modules(list(paths)):
        if info.name in NOT_KINDS or info.name.startswith("_"):
            continue
        kind = getattr(importlib.import_module(f"{package}.{info.name}"), "KIND", None)
        if not isinstance(kind, StepKind):
            problems.append(f"{package}.{info.name} defines no KIND (a StepKind)")
        elif any(known.name == kind.name for known in kinds):
            problems.append(f"{package}.{info.name}: a second kind named '{kind.name}'")
        else:
            kinds.append(kind)
    registry = {kind.name: kind for kind in sorted(kinds, key=lambda k: (k.order, k.name))}
    problems += declaration_problems(registry)
    if problems:
        raise ValueError("step kinds: " + "; ".join(problems))
    return registry


def declaration_problems(kinds: dict[str, StepKind]) -> list[str]:
    """Each input from an earlier step names a kind and files among its declared outputs; host kinds name a module."""
    problems = []
    for kind in kinds.values():
        if kind.implemented and not kind.module:
            problems.append(f"{kind.name}: implemented, but names no module to run")
        for spec in kind.inputs:
            if spec.from_step is None:
                continue
            producer = kinds.get(spec.from_step)
            if producer is None:
                problems.append(f"{kind.name}: input '{spec.param}' is from kind '{spec.from_step}', which does not exist")
                continue
            declared = {output.files for output in producer.outputs}
            problems += [f"{kind.name}: input '{spec.param}' names {pattern!r}, which {producer.name} does not declare"
                         f" among its outputs ({', '.join(sorted(declared))})"
                         for pattern in spec.files if pattern not in declared]
    return problems


STEP_KINDS: dict[str, StepKind] = discover()
