"""One writer per record: an exclusive ``flock`` on the run directory, held by ``repro`` and ``collect``.

Two ``invoke collect`` of one record at once both wrote the same partial files, and the second read the step's
exit code after the first had deleted the host's copy: a step that exited 0 was recorded as ``error``. The lock
is on the directory itself (no file is added to the record), taken before the manifest is read, and released
by the kernel when its holder dies (SIGKILL included), so it can never go stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from reprokit.errors import ConfigError
from reprokit.output.say import Say, silent

WAIT_POLL_S = 0.2


class RecordBusy(ConfigError):
    """Another process writes this record (a ``collect`` or the run itself) and did not finish in time."""


def hold_record(run_dir: Path, say: Say = silent, wait_s: float = 0.0) -> Callable[[], None]:
    """Hold ``run_dir`` alone; wait up to ``wait_s`` for another writer (saying so once), else refuse in one line.

    Returns the release (the run holds its record from its creation to its end, across several phases).
    """
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        deadline = time.monotonic() + wait_s
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RecordBusy(f"{run_dir}: another reprokit process (a collect, or the run itself) is writing this"
                                     " record; wait for it to end and run again") from None
                if not said:
                    say(f"waiting for the other reprokit process writing {run_dir.name} to finish ...")
                    said = True
                time.sleep(WAIT_POLL_S)
    except BaseException:
        os.close(fd)
        raise
    return lambda: os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def record_lock(run_dir: Path, say: Say = silent, wait_s: float = 0.0) -> Iterator[None]:
    release = hold_record(run_dir, say, wait_s)
    try:
        yield
    finally:
        release()


__all__ = ["RecordBusy", "hold_record", "record_lock"]
