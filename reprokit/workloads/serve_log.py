"""The serve wait's reading of the live server log: the phase the start has reached, and its first fatal line.

The control plane's triage reads the whole log afterwards and judges it; the wait only reads the marks of
``facts.serve_phases`` as lines arrive, to say where the start is (instead of "still waiting") and to stop
waiting for a server that has already died (instead of waiting for its exit, or for the timeout).
Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reprokit.workloads.facts.serve_phases import AUTOTUNE, DEAD, LABELS, PHASES, STARTING, PhaseLine, phase_of_line


@dataclass(frozen=True)
class FatalLine:
    """The first fatal line of a log, where it is: what the serve step cites when it stops waiting."""

    file: str
    line_no: int
    text: str

    def cite(self) -> str:
        return f"{self.file}:{self.line_no}: {self.text}"

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line_no, "text": self.text}


class ServerLogWatch:
    """Reads what a growing log added since the last look; keeps the furthest phase and the first fatal line.

    The phase only moves forward: with 8 ranks, a rank still loading weights while another autotunes does not
    move the start back. Autotuning reports each op's profiles done of total once per new count, whichever
    rank printed it; tqdm redraws a bar with '\\r' inside one line, and each redraw counts.
    """

    def __init__(self, path: Path):
        self.path = path
        self.offset_bytes = 0
        self.line_no = 0  # complete lines read
        self.partial = b""  # the last line, not ended yet
        self.partial_redraws_read = 0
        self.phase = STARTING
        self.autotune_done: dict[tuple[str | None, int | None], int] = {}
        self.fatal: FatalLine | None = None

    def read(self) -> list[str]:
        """Notes for a person on what the log added: a new phase, autotuning further, or the fatal line (last)."""
        if self.fatal is not None:
            return []
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset_bytes)
                data = log.read()
        except FileNotFoundError:
            return []
        self.offset_bytes += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        notes: list[str] = []
        for line in lines:
            self.line_no += 1
            redraws, self.partial_redraws_read = line.split(b"\r")[self.partial_redraws_read:], 0
            if self._read_segments(redraws, self.line_no, notes):
                return notes
        # a tqdm bar not finished yet: the redraws it has ended with '\r' so far
        redraws = self.partial.split(b"\r")[:-1]
        self._read_segments(redraws[self.partial_redraws_read:], self.line_no + 1, notes)
        self.partial_redraws_read = len(redraws)
        return notes

    def _read_segments(self, segments: list[bytes], line_no: int, notes: list[str]) -> bool:
        """Add the notes of these pieces of one line; True once the fatal line is found."""
        for segment in segments:
            found = phase_of_line(segment.decode("utf-8", errors="replace"))
            note = None if found is None else self._note(found, line_no)
            if note is not None:
                notes.append(note)
            if self.fatal is not None:
                return True
        return False

    def _note(self, found: PhaseLine, line_no: int) -> str | None:
        if found.phase == DEAD:
            self.fatal = FatalLine(self.path.name, line_no, found.line.rstrip())
            return f"fatal line, stopped waiting: {self.fatal.cite()}"
        if PHASES.index(found.phase) < PHASES.index(self.phase):
            return None
        where = f"({self.path.name}:{line_no})"
        if found.phase == AUTOTUNE and found.done is not None:
            key = (found.op, found.total)
            if self.phase == AUTOTUNE and self.autotune_done.get(key, -1) >= found.done:
                return None
            self.phase, self.autotune_done[key] = AUTOTUNE, found.done
            return f"{LABELS[AUTOTUNE]} {found.op} {found.done} of {found.total} {where}"
        if found.phase == self.phase:
            return None
        self.phase = found.phase
        return f"{LABELS[found.phase]} {where}"


# A crash handler's first line: torch's (vLLM's CPU build), CPython's faulthandler, absl/glog's. The frames it
# prints after it are the stack an upstream report needs; a fatal line of the triage only says who died.
CRASH_DUMP_START = re.compile(r"!+ Segfault encountered !+|Fatal Python error: [A-Za-z]|\*\*\* SIG[A-Z]+ received at time=")
CRASH_DUMP_FRAME = re.compile(r"^\s+(File |@ |#[0-9]+ )|^(Stack|Current thread|Thread 0x)")
CRASH_DUMP_MAX_LINES = 40


def crash_dump(path: Path) -> dict[str, object] | None:
    """The first crash handler's dump in a server log: its line (counted as the triage counts lines, a lone
    '\\r' ending one) and up to ``CRASH_DUMP_MAX_LINES`` of its frames, or None when the log has none. Handlers
    of several processes that fire at once (both workers of an expert-parallel server) print their first lines in a
    row: those are kept as one dump's head, with the frames that follow."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((n for n, line in enumerate(lines) if CRASH_DUMP_START.search(line)), None)
    if start is None:
        return None
    dump = [lines[start]]
    for line in lines[start + 1:]:
        # two processes' handlers firing at once print their first lines in a row, then their frames interleaved
        banner_again = CRASH_DUMP_START.search(line) and all(CRASH_DUMP_START.search(kept) for kept in dump)
        if not (CRASH_DUMP_FRAME.match(line) or banner_again) or len(dump) >= CRASH_DUMP_MAX_LINES:
            break
        dump.append(line[:400])
    return {"file": path.name, "line": start + 1, "lines": dump}
