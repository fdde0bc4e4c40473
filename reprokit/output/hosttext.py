"""Text that came from a host is data, never terminal control: the one sanitizer of every shown string.

A host decides the bytes of its step's output, its reader's messages and its file names. Printed raw, an
escape sequence sets the window title, clears the screen, plants a link or redraws a line as a fake
``PASS``; a right-to-left override turns ``txt.exe`` into ``exe.txt`` in a report. ``shown`` turns each
such code point into visible text (``\\x1b``, ``\\u202e``), so what reaches a terminal, a log line or a report
is exactly what the host sent, readable and inert: ESC and so every CSI/OSC/DCS sequence, the other C0
controls, DEL, the C1 controls, bidi overrides and isolates, zero-width and other format characters, line and
paragraph separators, lone surrogates (bytes that were not UTF-8). A tab stays a tab; a newline stays one only
where the caller says a message may have several lines.

Records keep the host's bytes as they came (a log is evidence); only what is shown goes through here.
"""

from __future__ import annotations

import re

_FORMAT_RANGES = (  # Unicode category Cf (format), Zl, Zp: invisible, or reordering what follows
    "\u00ad", "\u0600-\u0605", "\u061c", "\u06dd", "\u070f", "\u0890-\u0891", "\u08e2", "\u180e",
    "\u200b-\u200f", "\u2028-\u202e", "\u2060-\u2064", "\u2066-\u206f", "\ufeff", "\ufff9-\ufffb",
    "\U000110bd", "\U000110cd", "\U00013430-\U0001343f", "\U0001bca0-\U0001bca3", "\U0001d173-\U0001d17a",
    "\U000e0001", "\U000e0020-\U000e007f",
)
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff"  # C0 but tab and newline, DEL, C1, lone surrogates
_UNSAFE = re.compile(f"[{_CONTROLS}{''.join(_FORMAT_RANGES)}]")
_UNSAFE_OR_NEWLINE = re.compile(f"[\n{_CONTROLS}{''.join(_FORMAT_RANGES)}]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: object, multiline: bool = False) -> str:
    """``text`` safe to show: every control, bidi and invisible code point as its visible escape.

    ``multiline``: keep newlines (a message of reprokit's own that quotes host text); otherwise a newline is
    shown as ``\\x0a`` too, so one host line is one shown line.
    """
    text = text if isinstance(text, str) else str(text)
    return (_UNSAFE if multiline else _UNSAFE_OR_NEWLINE).sub(_escaped, text)


def shown_bytes(data: bytes) -> str:
    """Bytes from a host as shown text: UTF-8 where it is, each other byte visible (``\\udcff`` -> ``\\xff``)."""
    return shown(data.decode("utf-8", errors="backslashreplace"))


__all__ = ["shown", "shown_bytes"]
