"""Secrets (e.g. HF_TOKEN): read from the operator's environment, passed by file or environment, redacted everywhere.

A kit names the environment variables it needs (``secrets: [HF_TOKEN]``);
their values never appear on a command line, in the manifest or a report.
Every log the run keeps passes through ``Redactor`` before it is written: the value, its case variants, hex,
URL-encoded and base64 forms (three alignments), also split across lines or across two reads of a file.
A file that is gzip (by its first bytes, whatever its name: ``.gz``, a ``gzip``-ed stream a workload wrote) is
also read decompressed, every member of it; where a secret shows there, the file is written again as gzip of the
masked text. Its compressed bytes are then masked like any file's (a name in the gzip header, bytes after the members).
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import gzip
import os
import re
import shlex
import tempfile
import urllib.parse
import zlib
from pathlib import Path

from reprokit.errors import ConfigError

MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary text
CHUNK_BYTES = 1 << 20
MAX_BREAK_BYTES = 2
WRAP_CHARS = 76  # base64(1)'s and MIME's line length
GZIP_MAGIC = b"\x1f\x8b"


def _base64_cores(raw: bytes) -> set[bytes]:
    """The base64 text of ``raw`` at each of the three alignments it can have inside a longer encoding.

    Only the characters that ``raw`` alone decides are kept: a secret encoded after 0, 1 or 2 other bytes gives
    three different strings, each of which must be masked (standard and URL-safe alphabets).
    """
    cores = set()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + raw)
        start = (lead * 8 + 5) // 6  # the first character no leading byte touches
        end = (lead + len(raw)) * 8 // 6  # the last character every bit of which is the secret's
        core = encoded[start:end]
        cores |= {core, core.translate(bytes.maketrans(b"+/", b"-_"))}
    return {core for core in cores if len(core) >= MIN_SECRET_CHARS}


def variants(value: str) -> tuple[set[bytes], set[bytes]]:
    """(case-insensitive needles, exact needles) for a secret: itself, hex, URL-encoded; its base64 forms."""
    raw = value.encode()
    folded = {raw, raw.hex().encode(), urllib.parse.quote(value, safe="").encode(),
              urllib.parse.quote_plus(value, safe="").encode()}
    return folded, _base64_cores(raw)


BREAK_BYTES = b"\r\n"  # what a secret may be split by: deleted before the search, kept in the text between secrets
BREAK_RUN = re.compile(rb"[\r\n]*")
BREAK_ONE = re.compile(rb"[\r\n]")
DENSE_BYTES = 4096  # secrets closer than this, on average, are masked by one regex substitution first


class Redactor:
    """Masks each secret as it is, in any case, in hex, URL-encoded and base64 (3 alignments), even split by newlines.

    Linear in the data whatever it holds: whether a read holds a secret is one ``bytes.find`` per variant in the
    text with its line breaks deleted (``bytes.translate``) and in its lower case; where it does, the whole variants
    go by one regex substitution of literals when they are many, and the rest (those a break splits) are found
    the same way and mapped back to the original bytes by counting the breaks before them. The former single regex of every
    variant with a break allowed between any two characters backtracked on data made of a secret's pieces
    (about 3 MB/s: ``benchmarks/masking_bench.py``).
    """

    def __init__(self, values: list[str] | None = None):
        self.values = sorted({v for v in values or [] if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        folded: set[bytes] = set()
        exact: set[bytes] = set()
        for value in self.values:
            more_folded, more_exact = variants(value)
            folded |= more_folded
            exact |= more_exact
        # a break inside a variant is deleted before the search: a variant is searched without its breaks
        self._folded = sorted({n.translate(None, BREAK_BYTES).lower() for n in folded} - {b""}, key=len, reverse=True)
        self._exact = sorted({n.translate(None, BREAK_BYTES) for n in exact} - {b""}, key=len, reverse=True)
        # the whole variants, no break inside: one C-level substitution masks them (most secrets in a file are whole)
        literal = [b"(?i:" + re.escape(n) + b")" for n in sorted(folded, key=len, reverse=True)]
        literal += [re.escape(n) for n in sorted(exact, key=len, reverse=True)]
        self._whole = re.compile(b"|".join(literal)) if literal else None
        longest = max((len(n) for n in folded | exact), default=1)
        self._overlap_bytes = longest * (1 + MAX_BREAK_BYTES)  # a match may straddle two reads, breaks included

    @property
    def active(self) -> bool:
        return bool(self._folded or self._exact)

    def __call__(self, text: str) -> str:
        if not self.active:
            return text
        return self.bytes(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """The (start, end) of every secret in ``data``, merged where they overlap, in order."""
        if not self.active:
            return []
        stripped = data.translate(None, BREAK_BYTES)
        found: list[tuple[int, int]] = []
        for haystack, needles in ((stripped, self._exact), (stripped.lower(), self._folded)):
            for needle in needles:
                at = haystack.find(needle)
                while at >= 0:
                    found.append((at, at + len(needle)))
                    at = haystack.find(needle, at + len(needle))
        if not found:
            return []
        merged: list[list[int]] = []
        for start, end in sorted(found):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        if len(stripped) == len(data):
            return [(start, end) for start, end in merged]
        if len(data) - len(stripped) > 64 * len(merged):  # few secrets among many lines: count the breaks between them
            to_data = _BreakMap(data)
            return [(to_data.at(start), to_data.at(end - 1) + 1) for start, end in merged]
        # many secrets: each break's place in the stripped text, once; a position moves by the breaks at or before it
        shifts = [m.start() - i for i, m in enumerate(BREAK_ONE.finditer(data))]
        return [(start + bisect.bisect_right(shifts, start), end - 1 + bisect.bisect_right(shifts, end - 1) + 1)
                for start, end in merged]

    def bytes(self, data: bytes) -> bytes:
        """``data`` masked: the whole variants at once, then those a line break splits (``spans``)."""
        if self._whole is None:
            return data
        if self._many_whole(data):  # listing each match in Python would cost more than sre's substitution
            data = self._whole.sub(MASK.encode(), data)
        return _masked(data, self.spans(data))

    def _many_whole(self, data: bytes) -> bool:
        """More than one whole variant per 4 KiB (counted by ``bytes.count``, C-level)."""
        lowered = data.lower()
        found = sum(data.count(n) for n in self._exact) + sum(lowered.count(n) for n in self._folded)
        return found > len(data) // DENSE_BYTES

    def holds(self, text: str) -> bool:
        """Whether ``text`` (a file name, a path, a message) holds a secret in any form this masker knows.

        Names are data from the host like contents: a file named after a URL with ``?token=`` carries the token
        into every listing, record and console line that names it.
        """
        return self(text) != text

    def _chunks(self, fh, chunk_bytes: int):
        """(piece, whether it holds a secret) of the file, each piece ending where no secret can straddle it (a secret
        may span two reads): only the tail of each read is searched for where to cut."""
        carry = b""
        while chunk := fh.read(chunk_bytes):
            data = carry + chunk
            cut = max(0, len(data) - self._overlap_bytes)
            tail_from = max(0, cut - self._overlap_bytes)
            for start, end in self._all_spans(data[tail_from:]):
                if tail_from + start >= cut:
                    break
                cut = max(cut, tail_from + end)
            piece = data[:cut]
            yield piece, self.holds_bytes(piece)
            carry = data[cut:]
        if carry:
            yield carry, self.holds_bytes(carry)

    def _all_spans(self, data: bytes) -> list[tuple[int, int]]:
        """Every secret in ``data``, whole or split, in order (for where a read may be cut: a short piece)."""
        whole = [m.span() for m in self._whole.finditer(data)] if self._whole else []
        split = self.spans(data)
        return sorted(whole + split)

    def holds_bytes(self, data: bytes) -> bool:
        """Whether ``data`` holds a secret, whole or split: one ``bytes.find`` per variant, no match listed."""
        if not self.active:
            return False
        stripped = data.translate(None, BREAK_BYTES)
        if any(needle in stripped for needle in self._exact):
            return True
        lowered = stripped.lower()
        return any(needle in lowered for needle in self._folded)

    def file(self, path: Path, chunk_bytes: int = CHUNK_BYTES) -> bool:
        """Redact a file in place, streaming in bounded memory; True when something was masked.

        Every artifact goes through here, whatever its name: a secret can land in a JSON result or a trace as
        easily as in a log. The file is rewritten (atomically) only when it holds a secret. A gzip file is
        checked decompressed first (``_gzip_file``), then as the bytes it is.
        """
        if not self.active:
            return False
        unzipped = self._gzip_file(path, chunk_bytes)
        return self._plain_file(path, chunk_bytes) or unzipped

    def _plain_file(self, path: Path, chunk_bytes: int) -> bool:
        with open(path, "rb") as fh:
            if not any(held for _, held in self._chunks(fh, chunk_bytes)):
                return False
        with _replacing(path) as dst, open(path, "rb") as src:
            for piece, held in self._chunks(src, chunk_bytes):
                dst.write(self.bytes(piece) if held else piece)
        return True

    def _gzip_file(self, path: Path, chunk_bytes: int) -> bool:
        """Mask the text inside a gzip file (every member); True when it held a secret and was written again.

        A damaged or cut stream is read as far as it decompresses: what no gzip reader can get back is not text.
        """
        with open(path, "rb") as fh:
            if fh.read(2) != GZIP_MAGIC:
                return False
        with open(path, "rb") as fh:
            if not any(held for _, held in self._chunks(_Gunzipped(fh), chunk_bytes)):
                return False
        with _replacing(path) as dst, open(path, "rb") as src, \
                gzip.GzipFile(filename="", mode="wb", fileobj=dst, mtime=0) as packed:
            for piece, held in self._chunks(_Gunzipped(src), chunk_bytes):
                packed.write(self.bytes(piece) if held else piece)
        return True


def _masked(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """``data`` with each span replaced by the mask."""
    if not spans:
        return data
    out, at = [], 0
    for start, end in spans:
        out += [data[at:start], MASK.encode()]
        at = end
    out.append(data[at:])
    return b"".join(out)


class _BreakMap:
    """From a position in ``data`` with its line breaks deleted back to the position in ``data``: the breaks before
    it are counted with ``bytes.count`` from a cursor that only moves forward, so all the spans of one read cost
    one pass over it."""

    def __init__(self, data: bytes):
        self.data = data
        self.at_data, self.at_stripped = 0, 0  # a position in data, and the same in the stripped text

    def _breaks(self, start: int, end: int) -> int:
        return self.data.count(b"\n", start, end) + self.data.count(b"\r", start, end)

    def at(self, stripped: int) -> int:
        """The position in ``data`` of the stripped text's byte ``stripped`` (positions asked in increasing order)."""
        while self.at_stripped < stripped:
            step = stripped - self.at_stripped
            self.at_stripped += step - self._breaks(self.at_data, self.at_data + step)
            self.at_data += step
        self.at_data = BREAK_RUN.match(self.data, self.at_data).end()  # a break is never the byte asked for
        return self.at_data

class _Gunzipped:
    """The decompressed text of a gzip file, member after member, in reads of bounded size.

    Unlike ``gzip.GzipFile``, a damaged or cut stream gives what decompressed before the damage, then ends: the
    text that any gzip reader can get back is what must be checked.
    """

    def __init__(self, fh, chunk_bytes: int = CHUNK_BYTES):
        self.fh, self.chunk_bytes = fh, chunk_bytes
        self.unzip = zlib.decompressobj(wbits=31)
        self.pending = b""  # compressed bytes not yet fed
        self.ended = False

    def read(self, size: int) -> bytes:
        out = b""
        while not out and not self.ended:
            data = self.pending or self.fh.read(self.chunk_bytes)
            self.pending = b""
            if not data:
                self.ended = True
                break
            try:
                out = self.unzip.decompress(data, size)
            except zlib.error:
                self.ended = True  # damaged: what came before is all a reader gets
                break
            self.pending = self.unzip.unconsumed_tail
            if self.unzip.eof:  # a member ended; what follows is another one, or bytes that are not gzip (ended)
                self.pending = self.unzip.unused_data + self.pending
                self.unzip = zlib.decompressobj(wbits=31)
        return out


@contextlib.contextmanager
def _replacing(path: Path):
    """A file beside ``path`` to write, put in its place when the block ends, removed if it fails."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".redacting", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as dst:
            yield dst
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def mask_local_names(root: Path, redactor: Redactor) -> int:
    """Rename every entry under ``root`` whose name holds a secret to its masked name; the count renamed.

    A step on the control machine writes straight into the record, so its file names reach the manifest's artifact
    keys and the reports' links; renamed here, like a remote file that is pulled under a masked name. Deepest first,
    so a renamed directory never moves a path still to be visited; a masked name already taken gets a ``.N`` suffix.
    """
    if not redactor.values:
        return 0
    renamed = 0
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        masked = redactor(path.name)
        if masked == path.name:
            continue
        target, n = path.with_name(masked), 1
        while target.exists() or target.is_symlink():
            target, n = path.with_name(f"{masked}.{n}"), n + 1
        path.rename(target)
        renamed += 1
    return renamed


def collect_secrets(names: list[str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """The kit's secrets that are set; a value that cannot travel in an env file is refused before anything runs."""
    environ = os.environ if environ is None else environ
    found = {name: environ[name] for name in names if environ.get(name)}
    for name, value in found.items():
        if "\n" in value or "\r" in value or "\0" in value:
            raise ConfigError(f"secret {name} contains a newline or NUL; set it to the single-line value (e.g. the token"
                              " itself) and run again")
    return found


def env_file_text(secrets: dict[str, str], for_shell: bool) -> str:
    """``NAME=value`` lines: raw for ``docker run --env-file``, shell-quoted for ``set -a; . file``."""
    lines = []
    for name, value in secrets.items():
        if "\n" in value:
            raise ValueError(f"secret {name} contains a newline; it cannot be passed through an env file")
        lines.append(f"{name}={shlex.quote(value) if for_shell else value}")
    return "\n".join(lines) + ("\n" if lines else "")
