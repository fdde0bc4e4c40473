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
BREAK = rb"(?:\r?\n)?"  # a line break a secret may be split by
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


def _spread(needle: bytes) -> bytes:
    """A regex of ``needle`` that also matches it split across lines (a wrapped base64, a log cut in two)."""
    return BREAK.join(re.escape(needle[i:i + 1]) for i in range(len(needle)))


def _anchors(needle: bytes) -> set[bytes]:
    """Disjoint pieces of ``needle``: its head and tail, and its middle when it is long enough to be wrapped twice
    (base64 wraps at 76 characters); split by that many line breaks, one piece is still whole.

    A regex of every variant, breaks allowed anywhere, reads 5 MiB/s; these literal searches read far faster, and
    the pattern runs only on a piece of data that holds an anchor.
    """
    size = max(1, min(6, len(needle) // 3))
    middle = (len(needle) - size) // 2
    pieces = {needle[:size], needle[-size:]}
    return pieces | {needle[middle:middle + size]} if len(needle) > WRAP_CHARS else pieces


class Redactor:
    """Masks each secret as it is, in any case, in hex, URL-encoded and base64 (3 alignments), even split by newlines."""

    def __init__(self, values: list[str] | None = None):
        self.values = sorted({v for v in values or [] if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        folded: set[bytes] = set()
        exact: set[bytes] = set()
        for value in self.values:
            more_folded, more_exact = variants(value)
            folded |= more_folded
            exact |= more_exact
        needles = [b"(?i:" + _spread(n) + b")" for n in sorted(folded, key=len, reverse=True)]
        needles += [_spread(n) for n in sorted(exact, key=len, reverse=True)]  # longest first: a longer variant wins
        self._pattern = re.compile(b"|".join(needles)) if needles else None
        # one literal pattern each: sre's literal search is ~3x faster than ``bytes in bytes`` here
        self._folded_anchors = [re.compile(re.escape(a)) for a in sorted({a for n in folded for a in _anchors(n.lower())})]
        self._exact_anchors = [re.compile(re.escape(a)) for a in sorted({a for n in exact for a in _anchors(n)})]
        longest = max((len(n) for n in folded | exact), default=1)
        self._overlap_bytes = longest * (1 + MAX_BREAK_BYTES)  # a match may straddle two reads, breaks included

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self.bytes(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def may_hold(self, data: bytes) -> bool:
        """Whether ``data`` can hold a secret: a fast literal search for its anchors before the full pattern runs."""
        if self._pattern is None:
            return False
        if any(anchor.search(data) for anchor in self._exact_anchors):
            return True
        lowered = data.lower()
        return any(anchor.search(lowered) for anchor in self._folded_anchors)

    def bytes(self, data: bytes) -> bytes:
        return self._pattern.sub(MASK.encode(), data) if self._pattern and self.may_hold(data) else data

    def holds(self, text: str) -> bool:
        """Whether ``text`` (a file name, a path, a message) holds a secret in any form this masker knows.

        Names are data from the host like contents: a file named after a URL with ``?token=`` carries the token
        into every listing, record and console line that names it.
        """
        return self(text) != text

    def _chunks(self, fh, chunk_bytes: int):
        """(piece, may hold a secret) of the file, each piece ending where no secret can straddle it (a secret may span
        two reads); the anchors are searched once per read."""
        carry = b""
        while chunk := fh.read(chunk_bytes):
            data = carry + chunk
            held = self.may_hold(data)
            cut = max(0, len(data) - self._overlap_bytes)
            for match in self._pattern.finditer(data) if held else ():
                if match.start() >= cut:
                    break
                cut = max(cut, match.end())
            yield data[:cut], held
            carry = data[cut:]
        if carry:
            yield carry, self.may_hold(carry)

    def file(self, path: Path, chunk_bytes: int = CHUNK_BYTES) -> bool:
        """Redact a file in place, streaming in bounded memory; True when something was masked.

        Every artifact goes through here, whatever its name: a secret can land in a JSON result or a trace as
        easily as in a log. The file is rewritten (atomically) only when it holds a secret. A gzip file is
        checked decompressed first (``_gzip_file``), then as the bytes it is.
        """
        if self._pattern is None:
            return False
        unzipped = self._gzip_file(path, chunk_bytes)
        return self._plain_file(path, chunk_bytes) or unzipped

    def _plain_file(self, path: Path, chunk_bytes: int) -> bool:
        with open(path, "rb") as fh:
            if not any(held and self._pattern.search(piece) for piece, held in self._chunks(fh, chunk_bytes)):
                return False
        with _replacing(path) as dst, open(path, "rb") as src:
            for piece, held in self._chunks(src, chunk_bytes):
                dst.write(self._pattern.sub(MASK.encode(), piece) if held else piece)
        return True

    def _gzip_file(self, path: Path, chunk_bytes: int) -> bool:
        """Mask the text inside a gzip file (every member); True when it held a secret and was written again.

        A damaged or cut stream is read as far as it decompresses: what no gzip reader can get back is not text.
        """
        with open(path, "rb") as fh:
            if fh.read(2) != GZIP_MAGIC:
                return False
        with open(path, "rb") as fh:
            if not any(held and self._pattern.search(piece) for piece, held in self._chunks(_Gunzipped(fh), chunk_bytes)):
                return False
        with _replacing(path) as dst, open(path, "rb") as src, \
                gzip.GzipFile(filename="", mode="wb", fileobj=dst, mtime=0) as packed:
            for piece, held in self._chunks(_Gunzipped(src), chunk_bytes):
                packed.write(self._pattern.sub(MASK.encode(), piece) if held else piece)
        return True


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
