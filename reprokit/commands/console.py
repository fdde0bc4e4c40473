"""The front ends' console: rich on a terminal, plain lines in logs, 141 when the reader goes away."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from rich.text import Text

from reprokit import verbosity
from reprokit.errors import ExitCode
from reprokit.hosts.pullback import PULL_REPORT_BYTES
from reprokit.hosttext import shown
from reprokit.progress import CountProgress
from reprokit.records.models import Word

LOG = logging.getLogger(__name__)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`| head`): end quietly with 141, as the plain-print paths do (rich says 1)."""
        os.dup2(os.open(os.devnull, os.O_WRONLY), self.file.fileno())
        raise SystemExit(ExitCode.READER_GONE)


def _console(stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    # Logs and CI have no terminal: rich would wrap tables at 80 columns there.
    return _Console(stderr=stderr, highlight=False, width=None if probe.is_terminal else 140)


console = _console(stderr=False)
err_console = _console(stderr=True)

VERDICT_STYLE = {Word.PASS: "bold green", Word.FAIL: "bold red", Word.INCONCLUSIVE: "bold yellow", Word.INTERRUPTED: "bold red"}


@contextlib.contextmanager
def transfer_progress(description: str, total_bytes: int):
    """A rich progress bar for a pull-back, on a terminal and for transfers worth watching."""
    if not err_console.is_terminal or total_bytes < PULL_REPORT_BYTES:
        yield lambda n: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task_id = progress.add_task(description, total=total_bytes)
        yield lambda n: progress.advance(task_id, n)


def cell(value: object) -> Text:
    """A table cell of text that may come from a host: sanitized, and a ``Text`` so rich reads no markup in it."""
    return Text(shown(value))


def never_fatal(printer: Callable[[str], None]) -> Callable[[str], None]:
    """``printer`` that cannot end a run: what it raises (a terminal gone, a drawing library's error on a host's
    numbers) is logged with its traceback, and the run goes on; the record, not the terminal, is what counts."""
    @functools.wraps(printer)
    def printing(text: str) -> None:
        try:
            printer(text)
        except Exception:
            LOG.exception("printing a line failed; the run goes on")
    return printing


def printers(as_json: bool, prefix: str = ""):
    """``say`` for reprokit's own lines while it works, ``stream`` for what a workload or a tool prints, at the task's
    ``--quiet`` / ``--verbose`` level (``reprokit.verbosity``); under ``--json`` only the JSON is printed."""
    level = verbosity.level()
    lock = threading.Lock()
    counts = CountProgress(err_console, prefix)  # "progress: TASK k/n" lines become a bar with an ETA

    @never_fatal
    def say(message: str) -> None:
        if as_json or (level is verbosity.Level.QUIET and not verbosity.is_warning(message)):
            return
        counts.stop()
        with lock:
            err_console.print(f"{prefix}{shown(message, multiline=True)}", markup=False, highlight=False)

    @never_fatal
    def stream(line: str) -> None:
        if as_json or level is verbosity.Level.QUIET:
            return
        if counts.feed(line) and level is not verbosity.Level.VERBOSE:  # verbose: the line behind the bar too
            return
        with lock:
            err_console.print(f"{prefix}      | {shown(line)}", style="dim", markup=False, highlight=False)

    return say, stream


def warn_inventory(inventory) -> None:
    """The inventory's warnings (a misspelt reprokit variable) go to stderr, never into --json output."""
    for warning in getattr(inventory, "warnings", ()):
        print(f"warning: {shown(warning)}", file=sys.stderr)  # one line, never wrapped


def print_error(message: str) -> None:
    print(f"error: {shown(message, multiline=True)}", file=sys.stderr)
