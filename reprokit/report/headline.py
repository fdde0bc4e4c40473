"""What a run found, in the words a person reads first: reproduced, not reproduced, can't tell here.

The judge's words (PASS, FAIL, INCONCLUSIVE) are the record's and the exit codes' contract, and stay there. Most
kits' expectations describe the bug, so "PASS" means the bug *reproduced*: read alone, it says the opposite. A kit
whose expectations describe the fix (``expect_describes: fix``) passes when the fix works (*fixed*), and one whose
expectations describe a healthy stack (``health``: a smoke test, or a crash that fails a healthy server's
expectations) passes when it is *healthy*; the verdict carries which (``describes``). The headline says it plainly, with the count of expectations behind it, then the root cause the steps found (each kind's
``cause``: the line the server died at, the failing tactics, the bytes over the limit). The console's last lines and
the first lines of both reports are drawn from it, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reprokit.config.kit import Describes
from reprokit.records.models import StepEntry, Verdict, Word
from reprokit.report import sections

WORDS = {Word.PASS: "reproduced", Word.FAIL: "not reproduced", Word.INCONCLUSIVE: "can't tell here",
         Word.INTERRUPTED: "interrupted"}
# a PASS and a FAIL in the words of what the expectations describe (the verdict's ``describes``; absent: the bug)
WORDS_OF = {Describes.FIX: {Word.PASS: "fixed", Word.FAIL: "not fixed"},
            Describes.HEALTH: {Word.PASS: "healthy", Word.FAIL: "not healthy"}}


def words(verdict: Verdict) -> str:
    """The verdict's word for people: reproduced, fixed, healthy, their negations, can't tell here, interrupted."""
    return {**WORDS, **WORDS_OF.get(verdict.describes or "", {})}.get(verdict.verdict, verdict.verdict.lower())


@dataclass(frozen=True)
class Headline:
    words: str  # "reproduced: all 9 expectations held"
    causes: list[str] = field(default_factory=list)  # the root cause(s), one finding a line (a death: its lines)
    died: bool = False  # a cause is the server's death: the reports start with it
    # where the triage and the static analysis agree or not on the failing tactics (another check's line): the
    # headline has its place, under the causes, once a run's record carries it
    reconciliation: str | None = None

    def lines(self) -> list[str]:
        return [self.words, *(f"cause: {line}" if not line.startswith("  |") else line for line in self.causes),
                *([f"static vs triage: {self.reconciliation}"] if self.reconciliation else [])]


def counted(verdict: Verdict) -> str:
    """The verdict in words with the count of expectations behind it."""
    judged = verdict.expectations
    total = len(judged)
    held = sum(j.status == Word.PASS for j in judged)
    failed = sum(j.status == Word.FAIL for j in judged)
    unjudged = sum(j.status == Word.INCONCLUSIVE for j in judged)
    word = words(verdict)
    if not total:
        return f"{word}: {verdict.summary}"
    if verdict.verdict == Word.PASS:
        return f"{word}: all {total} expectations held"
    if verdict.verdict == Word.FAIL:
        return (f"{word}: {failed} of {total} expectations did not hold"
                + (f" ({held} held, {unjudged} could not be judged here)" if unjudged else f" ({held} held)"))
    if verdict.verdict == Word.INCONCLUSIVE:
        return f"{word}: {held} of {total} expectations held, {unjudged} could not be judged here"
    return f"{word}: {verdict.summary}"


def headline(verdict: Verdict, steps: dict[str, StepEntry], reconciliation: str | None = None) -> Headline:
    causes = sections.RunSections(steps).causes()
    died = any(line.startswith("the server died") for line in causes)
    if died:  # the death first
        causes = sorted(causes, key=lambda line: not (line.startswith("the server died") or line.startswith("  |")))
    return Headline(counted(verdict), causes, died, reconciliation)
