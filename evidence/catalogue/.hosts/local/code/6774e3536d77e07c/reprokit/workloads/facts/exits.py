"""The workloads' exit codes, and the step status each one means (one table for workloads and runner).

``StepStatus`` is every status a step's manifest entry can have: a workload's, by its exit code, and the runner's
own (timed out, no result, not run). It lives with the exit codes so that the workloads write and the control
plane reads one set of words.
"""

from __future__ import annotations

from enum import Enum, IntEnum

try:
    from enum import StrEnum
except ImportError:  # a host's Python before 3.11 runs the workloads too: the same behaviour, spelled out
    class StrEnum(str, Enum):  # type: ignore[no-redef]  # noqa: UP042 (enum.StrEnum is 3.11's)
        """A str whose ``str()`` and format are its value, as Python 3.11's ``enum.StrEnum``."""

        def __str__(self) -> str:
            return str.__str__(self)

        def __format__(self, spec: str) -> str:
            return str.__format__(str(self), spec)


class Exit(IntEnum):
    """Exit codes of workloads; the control plane maps them to step statuses (``STATUS_OF_EXIT``)."""

    OK = 0
    BAD_PARAMS = 2
    NO_DRIVER = 3
    NO_DEVICE = 4
    CHECK_FAILED = 5
    MISSING_DEPENDENCY = 6

    @property
    def meaning(self) -> str:
        return EXIT_MEANINGS[self]


EXIT_MEANINGS = {
    Exit.OK: "the workload ran; its checks are in result.json",
    Exit.BAD_PARAMS: "unreadable or invalid parameters",
    Exit.NO_DRIVER: "no NVIDIA driver / libcuda on this host",
    Exit.NO_DEVICE: "driver present, but no CUDA device visible",
    Exit.CHECK_FAILED: "it ran, and a device check did not behave as the contract says",
    Exit.MISSING_DEPENDENCY: "a tool or package it needs is missing (nvcc, a wheel, ...)",
}


class StepStatus(StrEnum):
    """A step's status in the manifest; written to JSON as its value (``"ok"``)."""

    OK = "ok"
    BAD_PARAMS = "bad_params"
    NO_DRIVER = "no_driver"
    NO_DEVICE = "no_device"
    CHECK_FAILED = "check_failed"
    MISSING_DEPENDENCY = "missing_dependency"
    TIMEOUT = "timeout"  # the runner's: the step ran past its timeout
    ERROR = "error"  # the runner's: no usable result (no result.json, a result its kind's model refuses)
    NOT_RUN = "not_run"  # the runner's: planned out (no GPU, an input missing) or not reached

    @property
    def is_error(self) -> bool:
        """The step itself failed (the run exits STEP_ERROR unless it FAILed): not a finding of the host."""
        return self in (StepStatus.TIMEOUT, StepStatus.ERROR, StepStatus.BAD_PARAMS)


STATUS_OF_EXIT = {
    Exit.OK: StepStatus.OK,
    Exit.BAD_PARAMS: StepStatus.BAD_PARAMS,
    Exit.NO_DRIVER: StepStatus.NO_DRIVER,
    Exit.NO_DEVICE: StepStatus.NO_DEVICE,
    Exit.CHECK_FAILED: StepStatus.CHECK_FAILED,
    Exit.MISSING_DEPENDENCY: StepStatus.MISSING_DEPENDENCY,
}
