"""The parser's fast newline count equals ``bytes.count`` on every kind of region."""

import pytest

from reprokit.triage.parser import _count_newlines

BUFFER = b"first\nsecond line\n\n\nthird\nlast without newline"


@pytest.mark.parametrize("start, end", [(0, len(BUFFER)), (0, 0), (6, len(BUFFER)), (0, 19), (6, 19), (18, 20),
                                        (5, 6), (len(BUFFER) - 3, len(BUFFER))])
def test_count_matches_bytes_count(start, end):
    assert _count_newlines(BUFFER, start, end) == BUFFER.count(b"\n", start, end)


def test_whole_megabyte_region():
    line = b"[2026-02-19 10:00:01 TP3 EP3] Decode batch, #running-req: 12\n"
    buffer = b"partial tail of the previous read\n" + line * 20000 + b"start of the next li"
    start, end = buffer.index(b"\n") + 1, buffer.rindex(b"\n") + 1
    assert _count_newlines(buffer, start, end) == 20000
