"""Each byte of a record hashed once on the control machine.

A file's sha256 is computed where its bytes pass anyway: as reprokit writes it (``write_bytes_atomic``) or as
it arrives from a host (the pull-back hashes the stream). The digest is remembered with the file's identity
(device, inode, size, mtime and ctime in ns); ``sha256_of`` returns it while the file is unchanged and hashes
the file again (and remembers that) once anything about it differs. ``invoke check-record`` never uses this:
it verifies from the bytes.

The ctime cannot be set from user space, so a rewrite shows even with the old mtime put back. Kernels since 6.13
give a change after a ``stat`` a fresh ctime; on older ones a same-size rewrite in the same clock tick (a few ms)
as reprokit's own write would go unseen, and reprokit never rewrites a record's file in place.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

CHUNK_BYTES = 1 << 20
Identity = tuple[int, int, int, int, int]


def identity(stat: os.stat_result) -> Identity:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def sha256_file(path: Path | str, chunk_bytes: int = CHUNK_BYTES) -> str:
    """The file's sha256 from its bytes (no memory of earlier digests)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


class Digests:
    """Digests of files this process wrote or pulled, valid while the file's identity is unchanged."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[Identity, str]] = {}
        self._lock = threading.Lock()

    def remember(self, path: Path | str, sha256: str) -> None:
        """``sha256`` is the digest of the bytes now at ``path`` (call it after the final rename)."""
        key = os.path.abspath(path)
        stat = os.stat(key)
        with self._lock:
            self._known[key] = (identity(stat), sha256)

    def sha256_of(self, path: Path | str) -> str:
        """The file's sha256: remembered if the file is as it was, else computed now from its bytes."""
        key = os.path.abspath(path)
        before = identity(os.stat(key))
        with self._lock:
            known = self._known.get(key)
        if known and known[0] == before:
            return known[1]
        digest = sha256_file(key)
        if identity(os.stat(key)) == before:  # not changed while it was read
            with self._lock:
                self._known[key] = (before, digest)
        return digest

    def forget_under(self, directory: Path | str) -> None:
        """Drop what is known of the files under ``directory`` (a finished record: nothing lists them again)."""
        prefix = os.path.join(os.path.abspath(directory), "")
        with self._lock:
            for key in [k for k in self._known if k.startswith(prefix)]:
                del self._known[key]


DIGESTS = Digests()  # one per process: the runner, the pull-back and the atomic writes share it
