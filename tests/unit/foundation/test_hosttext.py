"""The one sanitizer of host text: every control, bidi and invisible code point is shown as its escape."""

from __future__ import annotations

import sys
import unicodedata

from reprokit.output.hosttext import shown, shown_bytes


def test_terminal_sequences_are_shown_escaped():
    assert shown("\x1b]0;title\x07\x1b[2J\x9b31m\r\x7f") == r"\x1b]0;title\x07\x1b[2J\x9b31m\x0d\x7f"
    assert shown("a\tb\nc") == r"a	b\x0ac"
    assert shown("a\tb\nc", multiline=True) == "a\tb\nc"


def test_bidi_and_zero_width_are_shown_escaped():
    assert shown("name\u202etxt.exe") == r"name\u202etxt.exe"
    assert shown("a\u200bb\u2066c\ufeffd\u2028e") == r"a\u200bb\u2066c\ufeffd\u2028e"
    assert shown("tag\U000e0041") == r"tag\U000e0041"


def test_every_format_and_control_code_point_is_covered():
    unsafe = [chr(c) for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and chr(c) not in "\t\n"]
    assert [ch for ch in unsafe if shown(ch) == ch] == []
    assert shown("plain ASCII, ünïcødé, 中文, emoji 🙂") == "plain ASCII, ünïcødé, 中文, emoji 🙂"


def test_bytes_that_are_not_utf8_are_shown():
    assert shown_bytes(b"ok \xff\x1b") == r"ok \xff\x1b"
