"""The JSON/CLI contract shared by every workload (standard library only); exit codes in ``facts.exits``."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reprokit.workloads.facts.exits import STATUS_OF_EXIT, Exit

__all__ = ["COUNT_PROGRESS_RE", "SCHEMA_VERSION", "STATUS_OF_EXIT", "Exit", "WorkloadError", "count_progress", "main",
           "progress", "write_json_atomic"]

SCHEMA_VERSION = 1


class WorkloadError(Exception):
    """A failure the workload reports in result.json and through its exit code."""

    def __init__(self, code: Exit, message: str, **details: Any):
        super().__init__(message)
        self.code = code
        self.details = details


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file in the same directory, fsync, then rename over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=False, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_PROGRESS_LOCK = threading.Lock()


def progress(message: str) -> None:
    """One whole line on stderr: compile threads report at once, and a line split by another's would be lost."""
    with _PROGRESS_LOCK:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


# "progress: static-smem compile 12/33: <detail>": how many of a step's units are done, for a progress bar
# with an ETA in the control plane (which parses it with COUNT_PROGRESS_RE); on a terminal of its own, a plain line.
COUNT_PROGRESS_RE = re.compile(r"^progress: (?P<task>[^:]+?) (?P<done>\d+)/(?P<total>\d+)(?:: (?P<detail>.*))?$")


def count_progress(task: str, done: int, total: int, detail: str = "") -> None:
    progress(f"progress: {task} {done}/{total}" + (f": {detail}" if detail else ""))


def main(name: str, run: Callable[[dict[str, Any], Path], dict[str, Any]], argv: list[str] | None = None) -> int:
    """Parse the contract's CLI, call ``run(params, out_dir)`` and write its result.

    ``run`` returns the result body; it raises ``WorkloadError`` for outcomes
    with their own exit code (no driver, no device, ...). The result always
    lands in ``out_dir/result.json``; nothing else is printed but progress.
    """
    parser = argparse.ArgumentParser(prog=f"python -m reprokit.workloads.{name}")
    parser.add_argument("--params", type=Path, help="JSON file with the step's parameters")
    parser.add_argument("--out-dir", type=Path, required=True, help="directory for result.json and artifacts")
    args = parser.parse_args(argv)
    out_dir: Path = args.out_dir.resolve()  # workloads may change directory (compilers, servers): never relative
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"workload": name, "schema_version": SCHEMA_VERSION}
    try:
        params: dict[str, Any] = {}
        if args.params:
            try:
                params = json.loads(args.params.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise WorkloadError(Exit.BAD_PARAMS, f"{args.params}: cannot read parameters: {exc}") from None
            if not isinstance(params, dict):
                raise WorkloadError(Exit.BAD_PARAMS, f"{args.params}: parameters must be a JSON object")
        body = run(params, out_dir)
        code = Exit(body.pop("_exit", Exit.OK))
        result.update(status=STATUS_OF_EXIT[code], **body)
    except WorkloadError as exc:
        code = exc.code
        result.update(status=STATUS_OF_EXIT[code], error=str(exc), **exc.details)
        progress(f"{name}: {exc}")
    write_json_atomic(out_dir / "result.json", result)
    return int(code)
