"""The Hyperscan pass picks exactly the lines the ``re`` scans it replaced picked, on every kind of region.

The reference is the parser's old code: ``finditer`` of a newline not followed by sglang's prefix (to ``end - 1``)
and ``finditer`` of the trigger regex (to ``end``), each match as the start of its line.
"""

from __future__ import annotations

import itertools
import re
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, settings
from hypothesis import strategies as st

from reprokit.triage import formats
from reprokit.triage.parser import _SCAN, _SCAN_READY, _SGLANG_SHAPED, parse_lines
from reprokit.triage.scan import LineScan

NOT_SGLANG_LINE_RE = re.compile(rb"\n(?!\[(?:[0-9]{4}-|[0-9][0-9][-:]))")


def reference(scan: LineScan, region: bytes, start: int, end: int) -> tuple[list[int], list[int]]:
    not_sglang = [m.end() for m in NOT_SGLANG_LINE_RE.finditer(region, start, end - 1)]
    triggered = sorted({max(region.rfind(b"\n", start, m.start()) + 1, start)
                        for m in scan.trigger.finditer(region, start, end)})
    return not_sglang, triggered


def assert_same(region: bytes, start: int, end: int) -> None:
    for scan in (_SCAN, _SCAN_READY):
        assert scan.lines(region, start, end) == reference(scan, region, start, end)


def test_every_line_start_up_to_six_bytes_is_told_apart_as_sglang_is():
    """Every line of up to six bytes over the characters that sglang's prefix turns on, one region."""
    alphabet = [b"[", b"2", b"-", b":", b"a", b" ", b"\xff"]
    lines = [b"".join(chars) for size in range(7) for chars in itertools.product(alphabet, repeat=size)]
    region = b"\n".join(lines) + b"\n"
    not_sglang, _ = _SCAN.lines(region, 0, len(region))
    assert not_sglang == reference(_SCAN, region, 0, len(region))[0]
    starts = [0] + [i + 1 for i, byte in enumerate(region[:-1]) if byte == ord("\n")]
    assert not_sglang == [s for s in starts[1:] if not _SGLANG_SHAPED.match(region, s)]
    assert len(not_sglang) > 100_000 // 2


SGLANG = [b"[2026-02-19 10:05:12 TP3 EP3] ", b"[02-19 10:05:12] ", b"[10:05:12 DP1] ", b"[2026-02-19 10:05:12] "]
NEAR = [b"[2026", b"[20", b"[80746] ", b"[11/21/2024-10:26:10] ", b"[rank3]:", b"[TP0] ", b"[", b"", b"2026-", b"[2026-",
        b"[02-", b"[10:", b"] "]
MESSAGES = [b"Decode batch, #running-req: 12", b"Prefill batch, #new-seq: 1", b"The server is fired up and ready to roll!",
            b"INFO:     Uvicorn running", b"INFO:   Application startup complete.", b'INFO:     10.1.2.3:4 - "POST / HTTP/1.1" 200',
            b"INFO: x", b'- "', b"core_worker.cc:228: Failed", b"logging.cc:440: *** SIGSEGV", b"Capture cuda graph",
            b"Scheduler hit an exception: Traceback", b"Load weight end.", b"Capture", b"x] Capture y] Subprocess z", b"",
            b"] ] INFO:  ab] Load weight begin", b"Traceback (most recent call last):", "é ü".encode(), b"\x00\xff",
            b"Uvicorn", b"Application", b"INFO:Uvicorn", b"a.cc:1: b.cc:2: ", b"A.cc:1: ", b"] x.cc:: "]


@st.composite
def regions(draw):
    """Lines of sglang and other prefixes and messages, with what a reader's region has around its whole lines."""
    line = st.tuples(st.sampled_from(SGLANG + NEAR), st.sampled_from(MESSAGES),
                     st.sampled_from([b"", b"] ", b" - \"", b"] INFO: "])).map(b"".join)
    lines = draw(st.lists(line, min_size=1, max_size=30))
    before = draw(st.sampled_from([b"", b"tail of a line\n"[:5], b"[2026-02-19 10:05:12] INFO: x"]))
    after = draw(st.sampled_from([b"", b"[2026-02-19 1", b"- \"", b"\nCapture "]))
    body = b"\n".join(lines) + b"\n"
    return before + body + after, len(before), len(before) + len(body)


@given(regions())
@settings(max_examples=400, deadline=None)
def test_the_lines_picked_are_those_the_re_scans_pick(case):
    region, start, end = case
    assert_same(region, start, end)


def test_a_match_across_lines_triggers_the_line_it_starts_on():
    """'INFO: +[^ ]+ - "' (a request served, read until sglang is ready) runs over newlines: the line it starts on
    is read, as finditer's match start says, and the lines it runs over are not."""
    region = b'[2026-02-19 10:00:00] INFO: a\nb]Capture\n - "x\n[2026-02-19 10:00:01] Capture y\n'
    assert _SCAN.lines(region, 0, len(region)) == ([30, 40], [0, 46]) == reference(_SCAN, region, 0, len(region))
    assert _SCAN_READY.lines(region, 0, len(region)) == ([30, 40], [46])
    assert_same(region, 0, len(region))


def test_threads_scan_at_once_each_with_its_own_scratch():
    line = b"[2026-02-19 10:00:01 TP3 EP3] Decode batch, #running-req: 12\n"
    region = (line * 5000 + b"Traceback (most recent call last):\n" + line * 5000
              + b"[2026-02-19 10:00:02] Scheduler hit an exception: x\n") * 4
    expected = reference(_SCAN_READY, region, 0, len(region))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: _SCAN_READY.lines(region, 0, len(region)), range(32)))
    assert all(result == expected for result in results)
    assert len(expected[0]) == 4 and len(expected[1]) == 4


def test_every_server_pattern_read_on_sglang_lines_is_found_by_the_pass():
    """Each pattern's real example, as an sglang line's message, is a line the pass triggers (after readiness: all
    but the readiness-from-behaviour ones)."""
    for pattern in formats.SERVER_PATTERNS:
        if not pattern.on_sglang_lines:
            continue
        message = parse_lines([pattern.example])[0][0].text
        region = f"[2026-02-19 10:05:12 TP0] {message}\n".encode()
        assert _SCAN.lines(region, 0, len(region)) == ([], [0]), pattern.kind
        assert _SCAN_READY.lines(region, 0, len(region)) == ([], [] if pattern.readiness else [0]), pattern.kind
