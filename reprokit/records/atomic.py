"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Each write remembers the sha256 of what it wrote, so the record's artifact list does not read the file again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reprokit.errors import HostError
from reprokit.records.digests import DIGESTS, sha256_file

__all__ = ["RecordUnwritable", "UNWRITABLE_ERRNOS", "no_room", "sha256_file", "unwritable", "write_bytes_atomic",
           "write_json_atomic", "write_text_atomic"]

UNWRITABLE_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)  # this machine refuses the write: no retry helps


class RecordUnwritable(HostError):
    """This machine cannot write the run's record (read-only, no permission): said once, the host keeps the files."""


def unwritable(exc: BaseException) -> RecordUnwritable | None:
    """The one-line error for a local write this machine refused, or None for any other error (a link's, say)."""
    if not isinstance(exc, OSError) or exc.errno not in UNWRITABLE_ERRNOS or exc.filename is None:
        return None
    where = Path(exc.filename)
    return RecordUnwritable(f"this machine cannot write {where.parent} ({exc.strerror}); make it writable")


def no_room(exc: BaseException, path: Path) -> RecordUnwritable | None:
    """The one-line error for a disk (or quota) this machine filled while writing ``path``, or None."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return RecordUnwritable(f"this machine has no space left to write {path} ({exc.strerror}); free space there")


def write_bytes_atomic(path: Path, data: bytes, hashed: bool = True) -> str | None:
    """Write ``data`` to ``path`` atomically; return its sha256, remembered for the record (``hashed=False``: a file
    that is no artifact, the manifest, rewritten at every change)."""
    digest = hashlib.sha256(data).hexdigest() if hashed else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        refused = unwritable(exc) or no_room(exc, path)
        if refused:
            raise refused from None
        raise
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        if digest:
            DIGESTS.remember(path, digest)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        full = no_room(exc, path)
        if full:
            raise full from None
        raise
    return digest


def write_text_atomic(path: Path, text: str, hashed: bool = True) -> str | None:
    return write_bytes_atomic(path, text.encode("utf-8"), hashed)


def write_json_atomic(path: Path, data: Any, hashed: bool = True) -> str | None:
    return write_text_atomic(path, json.dumps(data, indent=2, default=str) + "\n", hashed)
