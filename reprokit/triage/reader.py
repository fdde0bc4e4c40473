"""Read a log as blocks of whole lines, in constant memory, whatever its size or state.

A log pulled back from a host may be gzip'd or plain, end in the middle of a line, hold
tqdm's carriage-return redraws, colour codes, NUL bytes or invalid UTF-8, or carry one
enormous line. The reader turns all of that into regions of complete lines, each ending
in ``b"\\n"``, and counts what it had to change instead of failing:

- ``\\r\\n`` and lone ``\\r`` become ``\\n`` (each tqdm refresh is a line);
- ANSI colour sequences are removed (sglang's newer formatter and vLLM's prefix colour);
- a line longer than ``max_line_bytes`` keeps its first ``max_line_bytes`` bytes and is
  counted in ``truncated_lines``;
- a damaged gzip stream stops the file where it breaks, with the reason in ``read_error``.

Reads are ``chunk_bytes`` at a time; the chunk is never larger than the line cap, so a
line can only exceed the cap when it spans chunks, which is where the cap is enforced.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from reprokit.errors import ConfigError

MAX_LINE_BYTES = 1 << 20
READ_CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ANSI_SEQUENCE = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")

Region = tuple[bytes, int, int]  # (buffer, start, end): the whole lines buffer[start:end]


@dataclass
class ReadStats:
    """What the reader saw and what it had to change, for one file."""

    bytes_read: int = 0
    gzip: bool = False
    truncated_lines: int = 0
    dropped_bytes: int = 0  # bytes of over-long lines beyond the cap
    ends_mid_line: bool = False  # the last line has no newline: the file was cut or is still being written
    read_error: str | None = None


class _GzipReader:
    """Decompress gzip members one after another, handing out all that the bytes allow.

    ``gzip.GzipFile`` raises on a cut-off stream and loses the data of that read; a log
    pulled from a live server is often cut, so this reader returns what decompressed and
    only then reports the damage (``EOFError``/``zlib.error`` on the next read).
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = b""  # compressed bytes not yet given to the decompressor
        self._member_open = False
        self._error: Exception | None = None

    def read(self, size: int) -> bytes:
        if self._error is not None:
            raise self._error
        parts: list[bytes] = []
        got = 0
        try:
            while got < size:
                if not self._pending:
                    self._pending = self._raw.read(READ_CHUNK_BYTES)
                    if not self._pending:
                        if self._member_open:
                            raise EOFError("the gzip stream ends before its end-of-stream marker (file cut short)")
                        break
                self._member_open = True
                out = self._z.decompress(self._pending, size - got)
                if self._z.eof:  # a whole member: what follows is the next member, or zero padding
                    self._pending = self._z.unused_data.lstrip(b"\x00")
                    self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    self._member_open = False
                else:
                    self._pending = self._z.unconsumed_tail
                parts.append(out)
                got += len(out)
        except (EOFError, zlib.error) as exc:
            self._error = exc
            if not parts:
                raise
        return b"".join(parts)


@contextmanager
def open_log(path: Path) -> Iterator[tuple[BinaryIO | _GzipReader, bool]]:
    """Open ``path`` for reading as (stream, is_gzip); gzip is recognised by its magic bytes.

    A path that cannot be opened is the caller's mistake, not a property of the log, so it
    raises ``ConfigError`` naming the file; everything after opening is content.
    """
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory; pass the log files inside it") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read log file ({exc.strerror or exc})") from None
    try:
        try:
            is_gzip = raw.peek(2)[:2] == GZIP_MAGIC
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read log file ({exc.strerror or exc})") from None
        yield (_GzipReader(raw) if is_gzip else raw), is_gzip
    finally:
        raw.close()


class _NewlineNormaliser:
    """``\\r\\n`` and ``\\r`` to ``\\n`` across chunk boundaries (a chunk may end between them)."""

    def __init__(self) -> None:
        self._pending_cr = False

    def feed(self, data: bytes) -> bytes:
        if self._pending_cr:
            data = b"\r" + data
            self._pending_cr = False
        if b"\r" not in data:
            return data
        if data.endswith(b"\r"):
            data = data[:-1]
            self._pending_cr = True
        return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def finish(self) -> bytes:
        return b"\n" if self._pending_cr else b""


class _LineAssembler:
    """Cut a byte stream into regions of whole lines, capping each line at ``max_line_bytes``.

    A region is ``(buffer, start, end)``: its lines are ``buffer[start:end]``. The line that
    straddles two reads becomes a small region of its own, so the read buffer itself is
    handed on, uncopied: copying every megabyte was a tenth of the triage's time.
    """

    def __init__(self, stats: ReadStats, max_line_bytes: int) -> None:
        self._stats = stats
        self._cap = max_line_bytes
        self._carry = b""  # the start of a line whose end has not been read yet
        self._discarding = False  # inside an over-long line, past the cap

    def feed(self, data: bytes) -> list[Region]:
        if self._discarding:
            newline = data.find(b"\n")
            if newline == -1:
                self._stats.dropped_bytes += len(data)
                return []
            self._stats.dropped_bytes += newline
            data = data[newline + 1:]
            self._discarding = False
        first = data.find(b"\n")
        if first == -1:
            self._carry += data
            return [self._cut_carry()] if len(self._carry) > self._cap else []
        regions = []
        if self._carry:  # the line that began in the previous read
            line = self._carry + data[: first + 1]
            if len(line) - 1 > self._cap:
                self._stats.truncated_lines += 1
                self._stats.dropped_bytes += len(line) - 1 - self._cap
                line = line[: self._cap] + b"\n"
            regions.append((line, 0, len(line)))
            self._carry = b""
        else:
            first = -1
        last = data.rfind(b"\n")
        if last > first:
            regions.append((data, first + 1, last + 1))
        self._carry = data[last + 1:]
        return regions

    def _cut_carry(self) -> Region:
        self._stats.truncated_lines += 1
        self._stats.dropped_bytes += len(self._carry) - self._cap
        line = self._carry[: self._cap] + b"\n"
        self._carry = b""
        self._discarding = True
        return line, 0, len(line)

    def finish(self) -> list[Region]:
        if self._carry:
            self._stats.ends_mid_line = True
            line, self._carry = self._carry + b"\n", b""
            return [(line, 0, len(line))]
        return []


def _strip_ansi(region: Region) -> Region:
    buffer, start, end = region
    if buffer.find(b"\x1b", start, end) == -1:
        return region
    stripped = ANSI_SEQUENCE.sub(b"", buffer[start:end])
    return stripped, 0, len(stripped)


def iter_regions(
    stream: BinaryIO | _GzipReader,
    stats: ReadStats,
    *,
    chunk_bytes: int = READ_CHUNK_BYTES,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Region]:
    """Yield regions ``(buffer, start, end)`` of whole, normalised lines; never raises on content."""
    if chunk_bytes > max_line_bytes:
        raise ValueError("chunk_bytes must not exceed max_line_bytes (the cap is enforced across chunks)")
    newlines = _NewlineNormaliser()
    lines = _LineAssembler(stats, max_line_bytes)
    while True:
        try:
            data = stream.read(chunk_bytes)
        except (EOFError, OSError, zlib.error) as exc:
            stats.read_error = f"stopped after {stats.bytes_read} bytes: {exc}"
            break
        if not data:
            break
        stats.bytes_read += len(data)
        for region in lines.feed(newlines.feed(data)):
            yield _strip_ansi(region)
    for region in lines.feed(newlines.finish()) + lines.finish():
        yield _strip_ansi(region)
