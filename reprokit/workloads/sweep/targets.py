"""Shared memory per block that each architecture grants on opt-in, and the cross-compile targets.

These are the capacities CUTLASS sizes its tiles against
(``smXX_smem_capacity_bytes``) and the CUDA driver reports as attribute 97
(MaxSharedMemoryPerBlockOptin). The present device's own limit is always
probed; these numbers are only used for devices that are not present.
"""

from __future__ import annotations

SMEM_OPTIN_BYTES_BY_ARCH = {
    "sm80": 166912,
    "sm86": 101376,
    "sm89": 101376,
    "sm90": 232448,
    "sm100": 232448,
    "sm103": 232448,
    "sm120": 101376,
    "sm121": 101376,
}

# Architectures every Triton configuration is also compiled for, without the hardware.
CROSS_TARGET_ARCHES = ("sm120",)


def arch_of(major: int, minor: int) -> str:
    return f"sm{major}{minor}"


def capability_of(arch: str) -> int:
    """``"sm120"`` -> 120, as Triton's GPUTarget wants it."""
    if not arch.startswith("sm") or not arch[2:].isdigit():
        raise ValueError(f"not an architecture name: {arch!r} (e.g. sm90, sm120)")
    return int(arch[2:])
