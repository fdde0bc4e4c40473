"""The step kinds' sections of the reports: one module per kind that draws, holding ``KIND`` (the declaration it
draws, imported from ``reprokit/step_kinds/``) and ``SECTIONS``.

The declarations and result models stay below, where the kit schema and the planner read them; what a kind draws
lives here, above the drawing primitives (``reprokit/draw/``), so that reading a kit loads no drawing code. The
registry finds the modules as ``reprokit/step_kinds/`` finds the kinds, and refuses a module without both names, a
second module for one kind, or a kind the step kinds do not declare. A kind without a module here draws nothing.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from reprokit.report.kind_sections.base import Section
from reprokit.step_kinds import STEP_KINDS, StepKind

NOT_SECTIONS = {"base"}


def discover(paths: Iterable[str] = __path__, package: str = __name__) -> dict[str, tuple[Section, ...]]:
    """Each module's ``SECTIONS`` under ``paths``, by the name of the kind (``KIND``) it draws."""
    drawn: dict[str, tuple[Section, ...]] = {}
    problems = []
    for info in pkgutil.iter_modules(list(paths)):
        if info.name in NOT_SECTIONS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        kind, sections = getattr(module, "KIND", None), getattr(module, "SECTIONS", None)
        if not isinstance(kind, StepKind) or not isinstance(sections, tuple):
            problems.append(f"{package}.{info.name} defines no KIND (the StepKind it draws) and SECTIONS (a tuple)")
        elif kind.name not in STEP_KINDS:
            problems.append(f"{package}.{info.name}: draws kind '{kind.name}', which reprokit/step_kinds/ does not declare")
        elif kind.name in drawn:
            problems.append(f"{package}.{info.name}: a second module drawing kind '{kind.name}'")
        else:
            drawn[kind.name] = sections
    if problems:
        raise ValueError("report sections: " + "; ".join(problems))
    return drawn


KIND_SECTIONS: dict[str, tuple[Section, ...]] = discover()
