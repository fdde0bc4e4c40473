"""The parser's scans that run in C over a whole region: counting newlines, and one Hyperscan pass that finds the
lines worth reading.

Python's ``re`` stops at every line it scans past (a lookahead at each newline, a match attempt at each ``] ``):
1.55 s per GiB of sglang log for the two scans, three quarters of what ``grep -E`` takes for the whole job.
Hyperscan (Vectorscan in the ``hyperscan`` wheel) compiles both into one database and scans a region in one pass,
in 0.76 s per GiB; it reports where each match starts (``HS_FLAG_SOM_LEFTMOST``), and the lines where it found a
lead are searched again by the regex that defines a triggered line, so the lines read are exactly those the ``re``
scans picked (docs/triage.md, "Speed").
"""

from __future__ import annotations

import re
import threading
from functools import cached_property

import hyperscan


def _count_newlines(buffer: bytes, start: int, end: int) -> int:
    """``buffer.count(b"\\n", start, end)``, three times faster on a region that is most of its buffer.

    ``bytes.count`` of one byte compares byte by byte; ``bytes.replace`` of one byte counts with
    ``memchr`` first (2.4 against 7.5 GB/s here), so the newlines of the whole buffer are its length
    less the length without them, and those outside the region are counted the slow way.
    """
    if (end - start) * 2 < len(buffer):
        return buffer.count(b"\n", start, end)
    return (len(buffer) - len(buffer.replace(b"\n", b""))) - buffer.count(b"\n", 0, start) - buffer.count(b"\n", end)


def _lead_alternatives(leads: list[bytes]) -> list[bytes]:
    """Each lead's alternatives apart (a lead with a group stays whole), each once, in order."""
    return list(dict.fromkeys(part for lead in leads for part in (lead.split(b"|") if b"(" not in lead else [lead])))


def _trigger_regex(leads: list[bytes]) -> re.Pattern[bytes]:
    """']' + ' ' + any lead: an sglang line whose message starts like a server pattern ('[ ]' keeps the
    regex's literal prefix one character long, the engine's fastest scan); leads sharing a first letter
    are grouped, so most messages fail after one comparison. A run of spaces before a letter is matched
    possessively (Python 3.11+): giving spaces back cannot make the letter match, and uvicorn's access
    lines ('] INFO:     10.1...') stop backtracking through them (5% of the scan)."""
    by_letter: dict[bytes, list[bytes]] = {}
    generic = []
    for lead in dict.fromkeys(re.sub(rb" \+(?=[A-Za-z])", rb" ++", part) for part in _lead_alternatives(leads)):
        if lead[:1].isalpha():
            by_letter.setdefault(lead[:1], []).append(lead[1:])
        else:
            generic.append(lead)
    grouped = [letter + b"(?:" + b"|".join(rest) + b")" for letter, rest in sorted(by_letter.items())]
    return re.compile(rb"\][ ](?:" + b"|".join(grouped + generic) + rb")")


def _where_to_look(lead: bytes) -> bytes:
    """What Hyperscan looks for to find a lead: ']' + ' ' + the lead, or what follows the lead's first repeat
    ('Uvicorn' of 'INFO: +Uvicorn', '\\.cc:...' of Ray's '[a-z_0-9]+\\.cc:[0-9]+: ') when the lead cannot run over
    a newline (no negated class): '] INFO:' starts every access line, and Hyperscan would stop on each. A hit then
    only says which line to search: the trigger regex, searched from the line's start, finds the lead itself."""
    _, repeat, after = lead.partition(b"+")
    return after if repeat and after and b"[^" not in lead else rb"\] " + lead


class LineScan:
    """The lines of a region to read: those that are not sglang lines, and the sglang lines a lead triggers.

    ``not_sglang_line`` is a newline followed by the start of a line that is not sglang's, in Hyperscan's
    syntax (no lookahead: the condition spelt positively); ``leads`` are the server patterns' leads, as for
    ``_trigger_regex``. The database is compiled on first use; each thread scans with scratch space of its own.
    """

    def __init__(self, not_sglang_line: bytes, leads: list[bytes]) -> None:
        self._not_sglang_line = not_sglang_line
        self._leads = leads
        self.trigger = _trigger_regex(leads)  # what a triggered line is; Hyperscan only narrows where to look
        self._local = threading.local()

    @cached_property
    def _database(self) -> hyperscan.Database:
        expressions = [self._not_sglang_line] + [_where_to_look(lead) for lead in _lead_alternatives(self._leads)]
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
                         flags=hyperscan.HS_FLAG_SOM_LEFTMOST)
        return database

    def _scratch(self) -> hyperscan.Scratch:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def lines(self, region: bytes, start: int, end: int) -> tuple[list[int], list[int]]:
        """(the starts of the lines after the first that are not sglang's, the starts of the triggered lines),
        each ascending, for the whole lines ``region[start:end]``: what ``re.finditer`` of
        ``\\n(?!sglang's prefix)`` (to ``end - 1``) and of ``self.trigger`` (to ``end``) give, as line starts."""
        not_sglang: list[int] = []
        lead_at: list[int] = []

        def on_match(expression: int, match_start: int, _end: int, _flags: int, _context: None) -> None:
            (lead_at if expression else not_sglang).append(match_start)

        block = region if start == 0 and end == len(region) else memoryview(region)[start:end]
        self._database.scan(block, match_event_handler=on_match, scratch=self._scratch())
        not_sglang = sorted({start + newline + 1 for newline in not_sglang})  # a line may match two branches
        return not_sglang, self._triggered(region, start, end, sorted(start + at for at in lead_at))

    def _triggered(self, region: bytes, start: int, end: int, lead_at: list[int]) -> list[int]:
        """The lines ``self.trigger.finditer(region, start, end)`` matches on, searched from the lines where
        Hyperscan found a lead only: a match cannot start on any other line, so each search finds the next
        match ``finditer`` would (the leftmost after the previous match's end), and matches overlapping
        the previous one are skipped as ``finditer`` skips them."""
        lines: list[int] = []
        searched_to = start  # finditer's position: the end of the last match
        for at in lead_at:
            if at < searched_to and region.find(b"\n", at, searched_to) != -1:
                continue  # its line ends before finditer's position
            line_start = max(region.rfind(b"\n", start, at) + 1, start)
            match = self.trigger.search(region, max(searched_to, line_start), end)
            if match is None:
                break
            line_of_match = max(region.rfind(b"\n", start, match.start()) + 1, start)
            if not lines or lines[-1] != line_of_match:
                lines.append(line_of_match)
            searched_to = match.end()
        return lines
