"""The front ends' console: rich on a terminal, plain lines in logs, 141 when the reader goes away."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from rich.text import Text

from reprokit.errors import ConfigError, ExitCode
from reprokit.hosts.pullback import PULL_REPORT_BYTES
from reprokit.output import verbosity
from reprokit.output.hosttext import shown
from reprokit.output.progress import CountProgress
from reprokit.records.models import Word

LOG = logging.getLogger(__name__)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`| head`): end quietly with 141, as the plain-print paths do (rich says 1)."""
        os.dup2(os.open(os.devnull, os.O_WRONLY), self.file.fileno())
        raise SystemExit(ExitCode.READER_GONE)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """A line of words is never folded by reprokit: the terminal folds it, and in a pipe or a log it stays one
        line (a path, an image reference or a verdict a script greps for). Tables still fit the width."""
        if "soft_wrap" not in kwargs and all(isinstance(each, str) for each in objects):
            kwargs["soft_wrap"] = True
        super().print(*objects, **kwargs)


def _console(stderr: bool) -> Console:
    """Tables drawn at the terminal's width; in a pipe or a log at $COLUMNS, else 80 (rich's own rule), so that what is
    pasted into an issue or read in CI has no row wider than a terminal. Colour: rich honours NO_COLOR and FORCE_COLOR;
    ``--color`` (``set_color``) decides over both."""
    return _Console(stderr=stderr, highlight=False)


console = _console(stderr=False)
err_console = _console(stderr=True)

# The program the user typed (`reprokit`, `invoke`, `inv`): set by the program as it parses the command line, so that
# a message's `invoke collect RUN` reads as the command that works where the user is.
_program_name = "invoke"


def set_program_name(name: str) -> None:
    global _program_name
    _program_name = name or "invoke"


def program_name() -> str:
    return _program_name


def as_typed(message: str) -> str:
    """``message`` with the commands it suggests (`` `invoke TASK ...` ``) spelled as the user's program; the one place
    a message's ``invoke`` becomes ``reprokit`` (messages are written once, with ``invoke``)."""
    if _program_name == "invoke":
        return message
    return re.sub(r"(^|`)invoke (?=[a-z-]+)", rf"\1{_program_name} ", message)


COLOR_MODES = ("auto", "always", "never")


def set_color(mode: str | None) -> None:
    """``--color``: ``never`` draws no colour even on a terminal, ``always`` draws it into a pipe too (a CI log that
    shows ANSI colours), ``auto`` leaves it to the terminal and NO_COLOR / FORCE_COLOR, as rich reads them."""
    mode = mode or "auto"
    if mode not in COLOR_MODES:
        raise ConfigError(f"--color {mode}: give one of {', '.join(COLOR_MODES)}")
    for each in (console, err_console):
        if mode == "never":
            each.no_color = True
        elif mode == "always":
            # rich decides the colour system when a console is made: make these two again, forced, in place (every
            # module holds them by name)
            _Console.__init__(each, stderr=each.stderr, highlight=False, force_terminal=True, no_color=False,
                              width=each.width)


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
    ``--quiet`` / ``--verbose`` level (``reprokit.output.verbosity``); under ``--json`` only the JSON is printed."""
    level = verbosity.level()
    lock = threading.Lock()
    counts = CountProgress(err_console, prefix)  # "progress: TASK k/n" lines become a bar with an ETA

    @never_fatal
    def say(message: str) -> None:
        if as_json or (level is verbosity.Level.QUIET and not verbosity.is_warning(message)):
            return
        counts.stop()
        with lock:
            err_console.print(f"{prefix}{shown(as_typed(message), multiline=True)}", markup=False, highlight=False,
                              soft_wrap=True)  # one line: the terminal folds it, a copy of it is one line

    @never_fatal
    def stream(line: str) -> None:
        if as_json or level is verbosity.Level.QUIET:
            return
        if counts.feed(line) and level is not verbosity.Level.VERBOSE:  # verbose: the line behind the bar too
            return
        with lock:
            err_console.print(f"{prefix}      | {shown(line)}", style="dim", markup=False, highlight=False)

    return say, stream


def print_markdown(text: str) -> None:
    """A report in Markdown: drawn (headings, tables) at a terminal, where raw Markdown is noise; as it is in a pipe
    or a file, where it is pasted into an issue or a CI summary."""
    if console.is_terminal:
        console.print(Markdown(text))
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def warn_inventory(inventory) -> None:
    """The inventory's warnings (a misspelt reprokit variable) go to stderr, never into --json output."""
    for warning in getattr(inventory, "warnings", ()):
        print(f"warning: {shown(warning)}", file=sys.stderr)  # one line, never wrapped
