"""What a step kind's sections are: a part of the reports drawn in a slot, from the step's result model.

A kind's declaration (``reprokit/step_kinds/``) types its result; its sections (a module of this package) draw that
model by field. ``reprokit/report/sections.py`` draws every section of a slot in the run's step order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from reprokit.step_kinds import Result

Slot = Literal["headline", "findings", "details"]
SLOTS: tuple[Slot, ...] = ("headline", "findings", "details")  # before the expectations, after them, after the steps


@dataclass(frozen=True)
class ReportStep:
    """One step with a result, as a section draws it: ``result`` is its kind's model, read by field. ``results``
    holds every step of the run that left a valid result, as (kind, result) in step order (a section may read
    another kind's)."""

    name: str
    result: Any  # the kind's own Result model (each section reads its kind's fields)
    results: tuple[tuple[str, Result], ...] = ()

    def first_result(self, uses: str) -> Any:
        """The result (model) of the run's first step of kind ``uses`` that left a valid one."""
        return next((result for kind, result in self.results if kind == uses), None)


Draw = Callable[[ReportStep], list[str]]


@dataclass(frozen=True)
class Section:
    """A kind's part of the reports, drawn in ``slot`` in the run's step order.

    ``each_step``: one section per step of the kind whose status is ok; otherwise one, for the first step of
    the kind that left a result. ``markdown`` returns lines of ``report.md``, ``html`` elements of ``report.html``:
    markup (a template of ``report/templates/kind_sections/`` through ``render_part``, or the drawing primitives); a plain
    string there is text, and the page escapes it.
    """

    slot: Slot
    markdown: Draw | None = None
    html: Draw | None = None
    each_step: bool = False
    cause: Draw | None = None  # the root cause this step found, in one line or a few (the console's headline, the
    #                            reports' first lines): the line, the tactic, the bytes; [] where it found none


