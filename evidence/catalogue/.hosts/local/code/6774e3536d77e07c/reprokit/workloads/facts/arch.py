"""The GPU architectures reprokit knows, and the shared memory per block each grants on opt-in.

The capacities are the ones CUTLASS sizes its tiles against (``smXX_smem_capacity_bytes`` in
``include/cutlass/arch/arch.h``; sm90's in ``gemm/collective/builders/sm90_common.inl``) and the CUDA driver
reports as attribute 97 (MaxSharedMemoryPerBlockOptin). The present device's own limit is always probed; these
numbers are for devices that are not present.
"""

from __future__ import annotations

# What an inventory's gpu_arch and a kit's `when: {gpu_arch: [...]}` may name.
GPU_ARCHES = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")

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

# Without opt-in a block gets this much dynamic shared memory on every architecture.
DEFAULT_SMEM_PER_BLOCK_BYTES = 49152


def arch_of(major: int, minor: int) -> str:
    """Compute capability (12, 0) -> ``"sm120"``."""
    return f"sm{major}{minor}"


def capability_of(arch: str) -> int:
    """``"sm120"`` -> 120, as Triton's GPUTarget wants it."""
    if not arch.startswith("sm") or not arch[2:].isdigit():
        raise ValueError(f"not an architecture name: {arch!r} (e.g. sm90, sm120)")
    return int(arch[2:])
