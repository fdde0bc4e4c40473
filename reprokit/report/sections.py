"""The step kinds' own sections of the reports, in the run's step order: the report names no kind.

Each section (``reprokit/report/kind_sections/``) gets its step's result as the kind's model (``reprokit/step_kinds/``) and
reads it by field.
"""

from __future__ import annotations

from collections.abc import Iterator

from reprokit.records.models import StepEntry
from reprokit.report.kind_sections import KIND_SECTIONS
from reprokit.report.kind_sections.base import SLOTS, ReportStep, Section, Slot
from reprokit.step_kinds import STEP_KINDS, Result, ResultError
from reprokit.workloads.facts.exits import StepStatus


def typed_results(steps: dict[str, StepEntry]) -> dict[str, tuple[str, Result]]:
    """Each step's result as its kind's model, by step name. A result that does not match its model is the step's
    error already (``plan/results.py``) and has none; one read back without that check is left out here too."""
    typed = {}
    for name, entry in steps.items():
        kind = STEP_KINDS.get(entry.uses)
        if kind is None or not isinstance(entry.result, dict):
            continue
        try:
            typed[name] = (entry.uses, kind.read_result(entry.result, f"step {name}"))
        except ResultError:
            continue
    return typed


class RunSections:
    """The run's results as their kinds' models, checked once, and the sections each slot draws from them."""

    def __init__(self, steps: dict[str, StepEntry]) -> None:
        self.typed = typed_results(steps)

    def drawn(self, slot: Slot) -> Iterator[tuple[Section, ReportStep]]:
        """Each section of ``slot`` with the step it draws: every ok step of an ``each_step`` section, else the
        first step of the kind that left a result."""
        results = tuple(self.typed.values())
        done: set[int] = set()
        for name, (uses, result) in self.typed.items():
            for section in KIND_SECTIONS.get(uses, ()):
                if section.slot != slot or id(section) in done:
                    continue
                if section.each_step:
                    if result.status == StepStatus.OK:
                        yield section, ReportStep(name, result, results)
                else:
                    done.add(id(section))
                    yield section, ReportStep(name, result, results)

    def causes(self) -> list[str]:
        """The root causes the steps found (each kind's ``cause``), in step order: the headline's second part."""
        return [line for slot in SLOTS for section, step in self.drawn(slot) if section.cause
                for line in section.cause(step)]

    def markdown(self, slot: Slot) -> list[str]:
        return [line for section, step in self.drawn(slot) if section.markdown for line in section.markdown(step)]

    def html(self, slot: Slot) -> list[str]:
        return [part for section, step in self.drawn(slot) if section.html for part in section.html(step)]


def markdown(steps: dict[str, StepEntry], slot: Slot) -> list[str]:
    return RunSections(steps).markdown(slot)


def html(steps: dict[str, StepEntry], slot: Slot) -> list[str]:
    return RunSections(steps).html(slot)
