"""Follow a step's log on the host while it runs, in bounded pieces, each line masked before anyone sees it.

Every launcher streams the same way: the step writes ``step.log`` in its directory (a session's shell, a batch
job on the cluster's shared file system), and the control plane reads what was added since the last read, through
the host's connection (``access/``: SFTP, or this machine's file).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

STREAM_READ_BYTES = 4 << 20  # the step log is followed at most this much per read
STEP_LOG = "step.log"  # every launcher's step writes its output here, in its directory


def step_log(remote_dir: str) -> str:
    return f"{remote_dir.rstrip('/')}/{STEP_LOG}"


class ChunkReader(Protocol):
    def read_chunk(self, path: str, offset: int, max_bytes: int) -> bytes | None: ...


def stream_log(connection: ChunkReader, redactor: Callable[[str], str], path: str, offset: int, pending: bytes,
               on_line: Callable[[str], None] | None) -> tuple[int, bytes]:
    """Read ``path`` from ``offset``; hand each whole line to ``on_line``; the new offset and the unfinished line."""
    data = connection.read_chunk(path, offset, STREAM_READ_BYTES)  # a fast-growing log comes in bounded pieces
    if not data:
        return offset, pending
    offset += len(data)
    pending += data
    *lines, pending = pending.split(b"\n")
    if len(pending) > STREAM_READ_BYTES:  # a "line" without end is shown in pieces, never held whole
        lines.append(pending)
        pending = b""
    if on_line:
        for line in lines:
            on_line(redactor(line.decode("utf-8", errors="replace")))
    return offset, pending
