"""The two record types of the triage's tables: a named message pattern and a line format."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Family = Literal["server", "autotuner", "progress", "error", "exception_text"]
Severity = Literal["info", "autotune", "error", "fatal"]


@dataclass(frozen=True)
class LogPattern:
    """One named string of an upstream log, and how the triage treats it."""

    kind: str
    regex: str
    fields: tuple[str | None, ...]  # one name per capture group; None for a group that only groups
    example: str  # a whole line as the upstream code prints it
    source: str
    family: Family = "server"  # server, autotuner, progress: at the start of a message; error, exception_text: anywhere
    severity: Severity = "info"
    multiline: bool = False  # the upstream record goes on over the following unprefixed lines
    lead: str = ""  # server patterns: how every match starts, for the parser's fast scan of sglang lines
    fatal_family: str = ""  # what kind of death a fatal match means, e.g. 'signal' (default: the kind)
    on_sglang_lines: bool = True  # server patterns: sglang can print it (else the fast scan need not look)
    readiness: str = ""  # server patterns: what this line shows of a server that is up ('request_served', 'traffic')
    autotuner: str = ""  # another autotuner's non-fatal failure ('inductor', 'tensorrt'): counted, never fatal
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = re.compile(self.regex)
        if compiled.groups != len(self.fields):
            raise ValueError(f"pattern {self.kind}: {compiled.groups} groups but {len(self.fields)} field names")
        if self.family == "server" and not self.lead:
            raise ValueError(f"pattern {self.kind}: a server pattern needs a lead for the parser's fast scan")
        object.__setattr__(self, "compiled", compiled)

    def find(self, message: str) -> dict[str, str | None] | None:
        """The named fields when ``message`` matches (at its start, or anywhere), else None."""
        anchored = self.family in ("server", "autotuner", "progress")
        m = self.compiled.match(message) if anchored else self.compiled.search(message)
        if m is None:
            return None
        return {name: value for name, value in zip(self.fields, m.groups()) if name is not None}


@dataclass(frozen=True)
class LineFormat:
    """How a line of one producer starts: the prefix the parser strips before the message."""

    name: str
    regex: str  # Python re; named groups ts, level, ranks, worker, rank
    example: str
    source: str
    anchored: bool = True  # False: the regex is a marker found anywhere, and the whole line is the message
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.regex))

    def head(self, line: str) -> tuple[int, dict[str, str | None]] | None:
        """(where the message starts, the prefix's named groups) if ``line`` has this format."""
        if not self.anchored:
            return (0, {}) if self.compiled.search(line) else None
        m = self.compiled.match(line)
        return None if m is None else (m.end(), m.groupdict())
