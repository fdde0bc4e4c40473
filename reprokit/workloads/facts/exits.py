"""The workloads' exit codes, and the step status each one means (one table for workloads and runner)."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Exit codes of workloads; the control plane maps them to step statuses."""

    OK = 0  # the workload ran; its checks are in result.json
    BAD_PARAMS = 2  # unreadable or invalid parameters
    NO_DRIVER = 3  # no NVIDIA driver / libcuda on this host
    NO_DEVICE = 4  # driver present, but no CUDA device visible
    CHECK_FAILED = 5  # it ran, and a device check did not behave as the contract says
    MISSING_DEPENDENCY = 6  # a tool or package it needs is missing (nvcc, a wheel, ...)


STATUS_OF_EXIT = {
    Exit.OK: "ok",
    Exit.BAD_PARAMS: "bad_params",
    Exit.NO_DRIVER: "no_driver",
    Exit.NO_DEVICE: "no_device",
    Exit.CHECK_FAILED: "check_failed",
    Exit.MISSING_DEPENDENCY: "missing_dependency",
}
