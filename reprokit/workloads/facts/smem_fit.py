"""Whether a kernel's shared memory fits a block: its static ``__shared__`` bytes plus the dynamic ones.

A launch gets at most the opt-in limit per block (``SMEM_OPTIN_BYTES_BY_ARCH``) for static and dynamic shared
memory together: the driver refuses ``cudaFuncSetAttribute(MaxDynamicSharedMemorySize, N)`` when N plus the
kernel's static bytes exceed it. NVIDIA warp issue 1701 (RTX 3090) was refused at 101120 B of dynamic shared
memory against a 101376 B limit because its static bytes were not counted, so every fit check here adds both.

At build time the compiler has its own limit on static ``__shared__`` alone, and on SM120/SM121 it depends on the
target's suffix: 48 KiB for ``sm_120``/``sm_121`` and the family-portable ``sm_120f``/``sm_121f``, 99 KiB for the
arch-specific ``sm_120a``/``sm_121a`` (Avarok atlas PR 903). Elsewhere the CUDA limit on static shared memory is
48 KiB. ``static_smem_limit_bytes`` says which applies to a compile target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.workloads.facts.exits import StrEnum  # enum.StrEnum, spelled out for a host's Python before 3.11

STATIC_SMEM_DEFAULT_BYTES = 48 * 1024
STATIC_SMEM_ARCH_SPECIFIC_SM12X_BYTES = 99 * 1024  # sm_120a, sm_121a
_TARGET = re.compile(r"(?:sm|compute)_(\d+)([af]?)$")


class KernelFit(StrEnum):
    """A kernel's verdict in the static analysis (a row's ``verdict``), written as its value (``"exceeds"``)."""

    FITS = "fits"
    EXCEEDS = "exceeds"  # static and dynamic bytes together over the limit: the launch is refused
    UNSUPPORTED = "unsupported"  # the dispatcher has no such kernel for the arch: nothing to size


@dataclass(frozen=True)
class SmemFit:
    """A kernel's shared memory against a block's limit, static and dynamic apart and together."""

    dynamic_bytes: int
    static_bytes: int
    limit_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.dynamic_bytes + self.static_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.limit_bytes

    @property
    def over_bytes(self) -> int:
        """Bytes over the limit (negative: spare)."""
        return self.total_bytes - self.limit_bytes


def fit(dynamic_bytes: int, static_bytes: int, limit_bytes: int) -> SmemFit:
    """Static plus dynamic bytes against ``limit_bytes`` (the opt-in limit, or a capacity constant)."""
    if dynamic_bytes < 0 or static_bytes < 0:
        raise ValueError(f"shared memory bytes cannot be negative: dynamic {dynamic_bytes}, static {static_bytes}")
    return SmemFit(dynamic_bytes, static_bytes, limit_bytes)


def static_smem_limit_bytes(target: str) -> int:
    """The compiler's limit on static ``__shared__`` for a target such as ``sm_120a`` or ``compute_121f``."""
    found = _TARGET.match(target)
    if found is None:
        raise ValueError(f"not a compile target: {target!r} (e.g. sm_120a, sm_121f, sm_90a)")
    number, suffix = int(found.group(1)), found.group(2)
    if number in (120, 121) and suffix == "a":
        return STATIC_SMEM_ARCH_SPECIFIC_SM12X_BYTES
    return STATIC_SMEM_DEFAULT_BYTES


def compile_targets(nvcc_flags: list[str]) -> list[str]:
    """The real targets of ``-gencode=arch=compute_120a,code=sm_120a`` flags, in order."""
    targets = []
    for flag in nvcc_flags:
        for code in re.findall(r"code=\[?([a-z_0-9,]+)\]?", flag):
            targets += [c for c in code.split(",") if c.startswith("sm_") and c not in targets]
    return targets
