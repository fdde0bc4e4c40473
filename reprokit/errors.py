"""Errors for people, and the exit codes of every command, in one table.

A ``ReprokitError`` carries a one-line message (what failed, where, what to do)
and the exit code that ``commands.tasking.call`` hands to ``invoke.Exit``.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of ``invoke`` tasks: the one table of them. ``docs/exit-codes.md`` is rendered from it (and the
    workloads' and the triage's codes: ``reprokit/exit_codes.py``), and a test holds the page to it."""

    PASS = 0
    FAIL = 1
    BAD_INPUT = 2
    INCONCLUSIVE = 3
    HOST_ERROR = 4
    STEP_ERROR = 5
    INTERRUPTED = 130
    READER_GONE = 141  # 128 + SIGPIPE, as a shell pipeline's reader that went away leaves it

    @property
    def meaning(self) -> str:
        return EXIT_CODE_MEANINGS[self]


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.PASS: "PASS: the run finished and every expectation held",
    ExitCode.FAIL: "FAIL: at least one expectation did not hold (or `check-record` found a damaged record)",
    ExitCode.BAD_INPUT: "bad input, nothing was run or written: a usage error (an unknown task or flag, a missing"
                        " argument: one line naming the command as typed, then its usage), or an inventory, kit,"
                        " parameter or name that is wrong (one line naming file:line and field)",
    ExitCode.INCONCLUSIVE: "INCONCLUSIVE: some expectation could not be judged on this host; the report says why",
    ExitCode.HOST_ERROR: "host error: unreachable, unknown or changed host key, locked, no image; or the run was"
                         " detached (`invoke collect`)",
    ExitCode.STEP_ERROR: "a step broke its contract (timeout, crash, no result) and nothing failed outright; see its"
                         " `step.log`",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C, SIGTERM): the workload was ended (its container removed), the manifest"
                          " says `interrupted`",
    ExitCode.READER_GONE: "the reader of the output went away (`invoke triage ... --json | head`): output stopped,"
                          " no traceback",
}


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
