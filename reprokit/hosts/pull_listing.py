"""What a host lists for a pull-back, checked before anything is opened or written (``pullback.py`` moves the bytes).

The host lists the step directory as JSON lines (``hostside.py``); every entry is checked here: relative, no
``..``, no control characters, UTF-8, a valid size; its local target must resolve inside the step's local
directory. The reader's framed answer is read in exact byte counts, never past what was asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.errors import HostError
from reprokit.records.run_dir import is_internal

BATCH_FILES, BATCH_SPEC_BYTES, BATCH_BYTES = 256, 96 << 10, 32 << 20  # one batch's files, argv bytes, data bytes
MAX_PATH_BYTES, MAX_NAME_BYTES = 4096, 255
WRAPPER_FILES = {"run.sh", "pid", "exit_code", "cgroup"}  # reprokit's own files in a step directory
SECRETS_FILES = {".secrets.sh", ".secrets.env"}  # deleted before the workload starts; never pulled


class PullStopped(HostError):
    """The pull-back cannot go on (disk full, cap reached, data damaged); the host keeps its copy."""


class ProtocolViolation(PullStopped):
    """The host's reader sent what the protocol does not allow (bytes past a file's size, past its answer)."""


class RemoteRefused(Exception):
    """The host refused one file (unreadable, replaced or shrunk since the listing)."""


@dataclass
class RemoteFile:
    rel: str
    size: int
    dev: int = 0
    ino: int = 0
    sha256: str | None = None  # computed on the host while the file streams


@dataclass
class PullStats:
    files: int = 0
    bytes: int = 0
    resumed: int = 0
    seconds: float = 0.0


@dataclass
class Listing:
    files: list[RemoteFile] = field(default_factory=list)
    not_pulled: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}: reported in the record


def unsafe_reason(rel: Any) -> str | None:
    """Why a path the host listed must not be written on this machine, or None when it is safe."""
    if not isinstance(rel, str) or not rel:
        return "empty or not a name"
    try:
        raw = rel.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not UTF-8"
    if rel.startswith("/"):
        return "absolute path"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "the path climbs out or has empty parts"
    if any(unicodedata.category(ch) == "Cc" for ch in rel):
        return "the name contains control characters (a newline?)"
    if len(raw) > MAX_PATH_BYTES or any(len(part.encode()) > MAX_NAME_BYTES for part in parts):
        return "the name is too long"
    return None


def parse_listing(text: str, where: str) -> Listing:
    """The files to pull from the host's JSON-lines listing; everything else goes to ``not_pulled``."""
    listing = Listing()
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            entry = json.loads(line)
        except ValueError:
            raise PullStopped(f"{where}: line {number} of the host's listing is not JSON; the files stay on the host") from None
        rel = entry.get("path") if isinstance(entry, dict) else None
        if rel == "" and entry.get("kind") == "unreadable":
            raise PullStopped(f"{where}: the host cannot read the step directory ({entry.get('error')})")
        kind = entry.get("kind") if isinstance(entry, dict) else None
        shown = rel.encode("utf-8", "backslashreplace").decode() if isinstance(rel, str) else repr(rel)
        if isinstance(rel, str) and (rel in WRAPPER_FILES or rel in SECRETS_FILES):
            continue
        reason = unsafe_reason(rel)
        if reason is None and is_internal(rel):
            reason = INTERNAL_NAME_REASON
        if reason is None and kind != "file":
            reason = f"not a regular file ({kind}{': ' + str(entry.get('error')) if entry.get('error') else ''})"
        if reason is None:
            size, dev, ino = entry.get("size"), entry.get("dev"), entry.get("ino")
            if not all(isinstance(v, int) and v >= 0 for v in (size, dev, ino)):
                reason = "the listing gives no valid size"
        if reason:
            listing.not_pulled.append({"path": shown, "reason": reason})
        else:
            listing.files.append(RemoteFile(rel, size, dev, ino))
    return listing


SECRET_NAME_REASON = "its name holds a secret"
INTERNAL_NAME_REASON = ("its name is one a record keeps for reprokit's own temporaries (.partial-*, .*.tmp, .*.redacting):"
                        " it would be left out of the manifest and of check-record")


def withhold_secret_names(listing: Listing, masked: Callable[[str], str]) -> Listing:
    """``listing`` with every path that holds a secret masked; a file whose path holds one is not pulled.

    The path is the host's data like the file's bytes: it reaches the manifest's artifact keys, the reports' links,
    the ``not_pulled`` list and the console. The file stays on the host, listed under its masked path and the reason.
    """
    kept = Listing(not_pulled=[{**entry, "path": masked(entry["path"])} for entry in listing.not_pulled])
    for remote in listing.files:
        shown = masked(remote.rel)
        if shown == remote.rel:
            kept.files.append(remote)
        else:
            kept.not_pulled.append({"path": shown, "reason": SECRET_NAME_REASON})
    return kept


def too_long_here(listing: Listing, out_dir: Path) -> Listing:
    """``listing`` with each file whose path this machine cannot hold (its path or a name past this file system's
    limits) moved to ``not_pulled`` with the reason: the host's limits are not this machine's, and one such path must
    not stop the rest of the step coming back."""
    root = out_dir.resolve()
    path_max, name_max = os.pathconf(root, "PC_PATH_MAX"), os.pathconf(root, "PC_NAME_MAX")
    kept = Listing(not_pulled=list(listing.not_pulled))
    for remote in listing.files:
        here = len(os.fsencode(root / remote.rel))
        longest = max(len(part.encode()) for part in remote.rel.split("/"))
        if here >= path_max or longest > name_max:
            kept.not_pulled.append({"path": remote.rel, "reason": (
                f"the path is too long for this machine ({here} bytes here, a name of {longest}; this file system"
                f" takes {path_max - 1} and {name_max}): copy it by hand, or run again with a shorter --runs-dir")})
        else:
            kept.files.append(remote)
    return kept


def local_target(out_dir: Path, rel: str) -> Path:
    """``out_dir/rel``, created parents included, refused unless it resolves inside ``out_dir``."""
    root = out_dir.resolve()
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    resolved_parent = Path(os.path.realpath(target.parent))
    if (resolved_parent != root and root not in resolved_parent.parents) or target.is_symlink():
        raise PullStopped(f"{rel}: resolves outside {out_dir}; refused")
    return resolved_parent / target.name


def partial_path(out_dir: Path, rel: str) -> Path:
    """Where a file grows while it arrives: beside the step directory, never among its artifacts."""
    folder = out_dir.parent / f".partial-{out_dir.name}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / hashlib.sha256(rel.encode()).hexdigest()[:32]


def batches(files: list[RemoteFile], max_bytes: int = BATCH_BYTES) -> Iterator[list[RemoteFile]]:
    """Files in groups that keep one reader's argv (and, for small files held whole, its answer) bounded."""
    batch: list[RemoteFile] = []
    spec_bytes = data_bytes = 0
    for remote in files:
        entry_bytes = len(json.dumps([remote.rel, remote.size, remote.dev, remote.ino]))
        if batch and (len(batch) >= BATCH_FILES or spec_bytes + entry_bytes > BATCH_SPEC_BYTES
                      or data_bytes + remote.size > max_bytes):
            yield batch
            batch, spec_bytes, data_bytes = [], 0, 0
        batch.append(remote)
        spec_bytes += entry_bytes
        data_bytes += remote.size
    if batch:
        yield batch


class BufferedStream:
    """Lines and exact byte counts from a chunk iterator (the reader's framed answer)."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks = chunks
        self.buffer = b""

    def _more(self) -> None:
        chunk = next(self.chunks, None)
        if chunk is None:
            raise EOFError("the host's reader stopped early")
        self.buffer += chunk

    def line(self, limit_bytes: int = 4096) -> bytes:
        while b"\n" not in self.buffer[:limit_bytes]:
            if len(self.buffer) > limit_bytes:
                raise PullStopped("the host's reader sent a header line that is too long; refused")
            self._more()
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._more()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def upto(self, size: int) -> bytes:
        """At most ``size`` bytes, as they come: a large file streams through without being held whole."""
        if not self.buffer:
            self._more()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def drain(self) -> None:
        for _ in self.chunks:  # runs the source to its end, which records the exit status
            pass
