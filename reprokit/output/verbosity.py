"""What ``--quiet`` and ``--verbose`` mean, defined once; every task takes both (``commands.tasking.ReprokitTask`` adds them).

- quiet (``-q``): the result (tables, verdicts, JSON, the record's path) on stdout, and on stderr only the lines
  that need a person: errors, and reprokit's lines that start with ``warning:``. Nothing while it works.
- normal: that, plus what reprokit is doing (steps, transfers, notes), progress bars with an ETA, and the
  progress lines of what it runs: workloads (``serve: autotuning ...``), Ansible, ``docker build``.
- verbose (``-v``): that, plus debug lines: the command each step runs on its host, and every ``progress:
  TASK k/n`` line a bar stands for.

The level is the process's, set by the task being run; the printers of ``reprokit.commands.console`` read it.
"""

from __future__ import annotations

import logging
import sys
from enum import IntEnum

from reprokit.errors import ConfigError
from reprokit.output.hosttext import shown


class Level(IntEnum):
    QUIET = 0
    NORMAL = 1
    VERBOSE = 2


HELP = {
    "quiet": "print only the result, errors and warnings (nothing while it works)",
    "verbose": "also print debug lines: each step's command on its host, every progress line a bar stands for",
}
WARNING_PREFIXES = ("warning:", "error:")
LOGGER = logging.getLogger("reprokit")  # debug lines: shown under --verbose only
PARAMIKO_LOGGER = logging.getLogger("paramiko")
_level = Level.NORMAL
_handler: logging.Handler | None = None


class _ShownFormatter(logging.Formatter):
    """Debug lines quote host text (a step's command, a host's answer): shown, never terminal control."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record), multiline=True)


def set_from_flags(quiet: bool, verbose: bool) -> Level:
    """The level of a task's ``--quiet`` / ``--verbose``; both at once is a usage error (exit 2)."""
    if quiet and verbose:
        raise ConfigError("give --quiet or --verbose, not both")
    return set_level(Level.QUIET if quiet else Level.VERBOSE if verbose else Level.NORMAL)


def set_level(level: Level) -> Level:
    global _level, _handler
    _level = level
    # Paramiko logs each failed connection from its transport thread, traceback and all (67 lines for three tries),
    # before reprokit's one line says what failed: its logger speaks under --verbose only.
    PARAMIKO_LOGGER.setLevel(logging.NOTSET if level is Level.VERBOSE else logging.CRITICAL + 1)
    if _handler is not None:
        LOGGER.removeHandler(_handler)
        _handler = None
    if level is Level.VERBOSE:  # a handler on stderr (now: tests swap it), for reprokit's debug lines only
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(_ShownFormatter("debug: %(message)s"))
        LOGGER.addHandler(_handler)
    LOGGER.setLevel(logging.DEBUG if level is Level.VERBOSE else logging.WARNING)
    return level


def level() -> Level:
    return _level


def is_warning(message: str) -> bool:
    """A line of reprokit's that a quiet run still shows."""
    return message.lstrip().lower().startswith(WARNING_PREFIXES)
