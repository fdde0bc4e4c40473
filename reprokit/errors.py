"""Errors for people, and the exit codes of every command, in one table.

A ``ReprokitError`` carries a one-line message (what failed, where, what to do)
and the exit code that ``commands.tasking.call`` hands to ``invoke.Exit``.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of ``invoke`` tasks (documented in the README)."""

    PASS = 0  # the run finished and every expectation held
    FAIL = 1  # the run finished and at least one expectation did not hold
    BAD_INPUT = 2  # inventory, kit, flag or file is malformed or unknown; nothing was run
    INCONCLUSIVE = 3  # the run finished but some expectation could not be judged here (reason in the report)
    HOST_ERROR = 4  # the host could not be used (unreachable, locked, runtime missing)
    STEP_ERROR = 5  # a step crashed outside its contract (no result, bad JSON); see its log
    INTERRUPTED = 130  # Ctrl-C / SIGTERM; the manifest says "interrupted"


class ReprokitError(Exception):
    """A failure with a message meant for the person at the terminal."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, exit_code: ExitCode | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class ConfigError(ReprokitError):
    """Bad inventory or kit: the message names file:line, the field and what is known."""

    exit_code = ExitCode.BAD_INPUT


class HostError(ReprokitError):
    exit_code = ExitCode.HOST_ERROR


class StepError(ReprokitError):
    exit_code = ExitCode.STEP_ERROR
