"""Secrets (e.g. HF_TOKEN): read from the operator's environment, passed by file or environment, redacted everywhere.

A kit names the environment variables it needs (``secrets: [HF_TOKEN]``);
their values never appear on a command line, in the manifest or a report.
Every log the run keeps passes through ``Redactor`` before it is written.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import tempfile
from pathlib import Path

from reprokit.errors import ConfigError

MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary text
CHUNK_BYTES = 1 << 20


class Redactor:
    def __init__(self, values: list[str] | None = None):
        self.values = sorted({v for v in values or [] if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        needles = [re.escape(v.encode()) for v in self.values]  # longest first: a secret containing another wins
        self._pattern = re.compile(b"|".join(needles)) if needles else None
        self._overlap_bytes = max((len(v.encode()) for v in self.values), default=1) - 1

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        return text

    def bytes(self, data: bytes) -> bytes:
        return self._pattern.sub(MASK.encode(), data) if self._pattern else data

    def _chunks(self, fh, chunk_bytes: int):
        """Pieces of the file, each ending where no secret can straddle it (a secret may span two reads)."""
        carry = b""
        while chunk := fh.read(chunk_bytes):
            data = carry + chunk
            cut = max(0, len(data) - self._overlap_bytes)
            for match in self._pattern.finditer(data):
                if match.start() >= cut:
                    break
                cut = max(cut, match.end())
            yield data[:cut]
            carry = data[cut:]
        if carry:
            yield carry

    def file(self, path: Path, chunk_bytes: int = CHUNK_BYTES) -> bool:
        """Redact a file in place, streaming in bounded memory; True when something was masked.

        Every artifact goes through here, whatever its name: a secret can land in a JSON result or a trace as
        easily as in a log. The file is rewritten (atomically) only when it holds a secret.
        """
        if self._pattern is None:
            return False
        with open(path, "rb") as fh:
            if not any(self._pattern.search(piece) for piece in self._chunks(fh, chunk_bytes)):
                return False
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".redacting", dir=path.parent)
        try:
            with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
                for piece in self._chunks(src, chunk_bytes):
                    dst.write(self.bytes(piece))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return True


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
