"""The architectures every Triton configuration is cross-compiled for, without the hardware.

Capacities and arch names are facts of ``reprokit.workloads.facts.arch``, imported here for the sweep's modules.
"""

from __future__ import annotations

from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH, arch_of, capability_of

__all__ = ["CROSS_TARGET_ARCHES", "SMEM_OPTIN_BYTES_BY_ARCH", "arch_of", "capability_of"]

CROSS_TARGET_ARCHES = ("sm120",)
