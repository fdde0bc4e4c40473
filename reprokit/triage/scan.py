"""The parser's two scans that run in C over a whole region: counting newlines, finding sglang lines to read."""

from __future__ import annotations

import re


def _count_newlines(buffer: bytes, start: int, end: int) -> int:
    """``buffer.count(b"\\n", start, end)``, three times faster on a region that is most of its buffer.

    ``bytes.count`` of one byte compares byte by byte; ``bytes.replace`` of one byte counts with
    ``memchr`` first (2.4 against 7.5 GB/s here), so the newlines of the whole buffer are its length
    less the length without them, and those outside the region are counted the slow way.
    """
    if (end - start) * 2 < len(buffer):
        return buffer.count(b"\n", start, end)
    return (len(buffer) - len(buffer.replace(b"\n", b""))) - buffer.count(b"\n", 0, start) - buffer.count(b"\n", end)


def _trigger_regex(leads: list[bytes]) -> re.Pattern[bytes]:
    """']' + ' ' + any lead: an sglang line whose message starts like a server pattern ('[ ]' keeps the
    regex's literal prefix one character long, the engine's fastest scan); leads sharing a first letter
    are grouped, so most messages fail after one comparison. A run of spaces before a letter is matched
    possessively (Python 3.11+): giving spaces back cannot make the letter match, and uvicorn's access
    lines ('] INFO:     10.1...') stop backtracking through them (5% of the scan)."""
    by_letter: dict[bytes, list[bytes]] = {}
    generic = []
    alternatives = [re.sub(rb" \+(?=[A-Za-z])", rb" ++", part)
                    for lead in leads for part in (lead.split(b"|") if b"(" not in lead else [lead])]
    for lead in dict.fromkeys(alternatives):
        if lead[:1].isalpha():
            by_letter.setdefault(lead[:1], []).append(lead[1:])
        else:
            generic.append(lead)
    grouped = [letter + b"(?:" + b"|".join(rest) + b")" for letter, rest in sorted(by_letter.items())]
    return re.compile(rb"\][ ](?:" + b"|".join(grouped + generic) + rb")")
