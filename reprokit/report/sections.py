"""The step kinds' own sections of the reports, in the run's step order: the report names no kind."""

from __future__ import annotations

from collections.abc import Iterator

from reprokit.records.models import StepEntry
from reprokit.step_kinds import STEP_KINDS, ReportStep, Section, Slot


def drawn(steps: dict[str, StepEntry], slot: Slot) -> Iterator[tuple[Section, ReportStep]]:
    """Each section of ``slot`` with the step it draws: every ok step of an ``each_step`` section, else the
    first step of the kind that left a result."""
    done: set[int] = set()
    for name, entry in steps.items():
        kind, result = STEP_KINDS.get(entry.uses), entry.result
        if kind is None or not isinstance(result, dict):
            continue
        for section in kind.sections:
            if section.slot != slot or id(section) in done:
                continue
            if section.each_step:
                if result.get("status") == "ok":
                    yield section, ReportStep(name, result, steps)
            else:
                done.add(id(section))
                yield section, ReportStep(name, result, steps)


def markdown(steps: dict[str, StepEntry], slot: Slot) -> list[str]:
    return [line for section, step in drawn(steps, slot) if section.markdown for line in section.markdown(step)]


def html(steps: dict[str, StepEntry], slot: Slot) -> list[str]:
    return [part for section, step in drawn(steps, slot) if section.html for part in section.html(step)]
