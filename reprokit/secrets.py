"""Secrets (e.g. HF_TOKEN): read from the operator's environment, passed by file or environment, redacted everywhere.

A kit names the environment variables it needs (``secrets: [HF_TOKEN]``);
their values never appear on a command line, in the manifest or a report.
Every log the run keeps passes through ``Redactor`` before it is written.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary text


class Redactor:
    def __init__(self, values: list[str] | None = None):
        self.values = sorted({v for v in values or [] if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        return text

    def bytes(self, data: bytes) -> bytes:
        for value in self.values:
            data = data.replace(value.encode(), MASK.encode())
        return data

    def file(self, path: Path) -> bool:
        """Redact a file in place; True when something was masked."""
        if not self.values:
            return False
        data = path.read_bytes()
        clean = self.bytes(data)
        if clean != data:
            path.write_bytes(clean)
            return True
        return False


def collect_secrets(names: list[str], environ: dict[str, str] | None = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in names if environ.get(name)}


def env_file_text(secrets: dict[str, str], for_shell: bool) -> str:
    """``NAME=value`` lines: raw for ``docker run --env-file``, shell-quoted for ``set -a; . file``."""
    lines = []
    for name, value in secrets.items():
        if "\n" in value:
            raise ValueError(f"secret {name} contains a newline; it cannot be passed through an env file")
        lines.append(f"{name}={shlex.quote(value) if for_shell else value}")
    return "\n".join(lines) + ("\n" if lines else "")
