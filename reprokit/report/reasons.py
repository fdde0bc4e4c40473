"""A reason shared by many expectations, said once.

On a machine without a GPU the same "no NVIDIA driver ..." text ends up in
most expectations' reasons, through different paths (a gated expectation, a
step that did not run, a step whose input step did not run). The roots are
known: the fingerprint's ``gpu_reason`` and the reason of each step that did
not produce a result. A root found in two or more reasons becomes a note,
said once ("no GPU here: 6 expectations need one: ..."), and each reason
refers to it instead of repeating it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.errors import ConfigError
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Judgement, StepEntry, StepStatus
from reprokit.records.run_dir import load_manifest, load_verdict

Steps = Mapping[str, StepEntry] | Iterable[StepEntry]  # the runner's steps by name, or the manifest's list


@dataclass
class SharedReason:
    number: int
    label: str  # "no GPU here" or "step 'serve' (missing_dependency)"
    need: str  # "need one" or "depend on it"
    text: str
    names: list[str] = field(default_factory=list)
    step: str | None = None  # the step whose own reason this is (None: the fingerprint's)

    def sentence(self) -> str:
        return f"{self.label}: {len(self.names)} expectations {self.need}: {self.text}"


def _roots(fingerprint: Fingerprint | None, steps: Steps) -> list[tuple[str, str, str, str | None]]:
    roots = []
    gpu_reason = fingerprint.gpu_reason if fingerprint else None
    if gpu_reason and not fingerprint.devices:
        roots.append(("no GPU here", "need one", str(gpu_reason), None))
    entries = steps.values() if isinstance(steps, Mapping) else steps
    for entry in entries:
        reason = entry.reason
        if reason and entry.status != StepStatus.OK and not (gpu_reason and gpu_reason in reason):
            roots.append((f"step '{entry.name}' ({entry.status})", "depend on it", reason, entry.name))
    return roots


def _refer(reason: str, root: str, number: int) -> str:
    mark = f"note {number}"
    for wrapped in (f"({root})", root):
        if wrapped in reason:
            shortened = reason.replace(wrapped, f"({mark})" if wrapped.startswith("(") else mark)
            return shortened
    return reason


def shared_reasons(expectations: list[Judgement], fingerprint: Fingerprint | None,
                   steps: Steps) -> tuple[list[SharedReason], dict[str, str]]:
    """The notes (roots shared by two or more expectations) and each expectation's reason referring to them."""
    notes: list[SharedReason] = []
    cells = {j.name: j.reason or "" for j in expectations}
    # shorter roots first: a step's reason may quote another step's (triage quotes serve's), which then reads "note 1"
    for label, need, text, step in sorted(_roots(fingerprint, steps), key=lambda r: len(r[2])):
        names = [name for name, reason in cells.items() if text in reason]
        if len(names) < 2:
            continue
        note = SharedReason(len(notes) + 1, label, need, text, names, step)
        notes.append(note)
        for name in names:
            cells[name] = _refer(cells[name], text, note.number)
    return notes, cells


def refer(text: str | None, notes: list[SharedReason], step: str | None = None) -> str:
    """``text`` with every note's root replaced by a reference to it, except the note of ``step``'s own reason."""
    out = str(text or "")
    for note in notes:
        if (step is None or note.step != step) and note.text in out:
            out = _refer(out, note.text, note.number)
    return out


def record_reasons(run_dir: Path) -> tuple[list[SharedReason], dict[str, str]]:
    """``shared_reasons`` of a finished record (its verdict.json, and its manifest's fingerprint and steps)."""
    try:
        manifest, verdict = load_manifest(run_dir), load_verdict(run_dir)
    except ConfigError:
        return [], {}
    return shared_reasons(verdict.expectations if verdict else [], manifest.fingerprint, manifest.steps)


class SaidOnce:
    """For the console, line by line: a reason already said is not said again; the line names where it was said
    ("as the fingerprint said", "the same as sweep"), so that it points at something a reader can find."""

    def __init__(self, said: str | None = None, where: str = "the fingerprint"):
        self.said: dict[str, str] = {said: where} if said else {}

    def __call__(self, text: str | None, where: str = "the step above") -> str:
        out = str(text or "")
        for earlier, label in sorted(self.said.items(), key=lambda item: len(item[0]), reverse=True):
            if earlier == out:
                out = f"the same as {label}"
                break
            if earlier in out:
                out = out.replace(earlier, f"as {label} said")
        if text and text not in self.said:
            self.said[str(text)] = where
        return out
