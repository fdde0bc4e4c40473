"""Import a TileLang kernel from its package's files and lower it for a named CUDA arch, with no GPU.

A package's ``__init__`` may ask the GPU for its capability at import (FlashQLA's picks a kernel variant so), so
the package is registered as an empty namespace over its extracted directory and only ``source`` is executed, with
whatever of the package it imports itself (``flash_qla.utils``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError

# Architecture-specific ("a") targets where the part has them: what a build for that GPU compiles for.
ARCH_SPECIFIC = ("sm90", "sm100", "sm103", "sm120", "sm121")


def target_arch(arch: str) -> str:
    """``sm121`` -> ``sm_121a``; ``sm89`` -> ``sm_89``: the arch string a CUDA target of TileLang takes."""
    return f"sm_{arch[2:]}{'a' if arch in ARCH_SPECIFIC else ''}"


def versions() -> tuple[str | None, str | None]:
    """TileLang's and torch's versions, or None for a missing one."""
    found = []
    for name in ("tilelang", "torch"):
        try:
            found.append(getattr(importlib.import_module(name), "__version__", "unknown"))
        except ImportError:
            found.append(None)
    return found[0], found[1]


def load_kernel(package_dir: Path, import_as: str, package_root: str, source: str, kernel: str) -> Any:
    """The ``@tilelang.jit`` object ``kernel`` of ``source``, a file under ``package_root`` written to ``package_dir``."""
    namespace = types.ModuleType(import_as)
    namespace.__path__ = [str(package_dir / import_as)]
    sys.modules[import_as] = namespace
    relative = source[len(package_root.rstrip("/")) + 1:]
    name = f"{import_as}.{relative[:-3].replace('/', '.')}"
    spec = importlib.util.spec_from_file_location(name, package_dir / import_as / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - upstream's import failing is the finding to report
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"importing {source} failed: {type(exc).__name__}: {exc}") from None
    found = getattr(module, kernel, None)
    if found is None or not hasattr(found, "get_tir"):
        raise WorkloadError(Exit.BAD_PARAMS, f"{source} has no @tilelang.jit {kernel}")
    return found


# The element sizes of the static ``__shared__`` arrays TileLang's CUDA source declares (barriers, small vectors).
STATIC_ELEMENT_BYTES = {"uint64_t": 8, "int64_t": 8, "float": 4, "int": 4, "uint": 4, "half_t": 2,
                        "bfloat16_t": 2, "half": 2, "uchar": 1, "char": 1, "bool": 1}
STATIC_ARRAY = re.compile(r"^\s*__shared__\s+(?:__align__\(\d+\)\s+)?(\w+)\s+\w+\[(\d+)\];", re.MULTILINE)


def static_bytes(kernel_source: str) -> int | None:
    """The bytes of the static ``__shared__`` arrays of ``kernel_source`` (alignment padding not counted), or None
    where an element type is not one this table knows."""
    total = 0
    for element, count in STATIC_ARRAY.findall(kernel_source):
        if element not in STATIC_ELEMENT_BYTES:
            return None
        total += STATIC_ELEMENT_BYTES[element] * int(count)
    return total


def shared_bytes(jit_kernel: Any, args: dict[str, Any], arch: str) -> tuple[int, int | None]:
    """Lower ``jit_kernel`` at ``args`` for ``arch``: the largest ``dyn_shared_memory_buf`` of its device functions
    (what the launch asks ``cudaFuncSetAttribute`` for) and the static ``__shared__`` bytes of its source."""
    import tilelang  # noqa: PLC0415 - optional: only a host that lowers TileLang has it
    from tvm.target import Target  # noqa: PLC0415

    target = Target({"kind": "cuda", "arch": target_arch(arch)})
    with target:
        artifact = tilelang.lower(jit_kernel.get_tir(**args), target=target)
    sizes = [int(func.attrs["dyn_shared_memory_buf"]) for _, func in artifact.device_mod.functions.items()
             if func.attrs is not None and "dyn_shared_memory_buf" in func.attrs]
    return max(sizes, default=0), static_bytes(artifact.kernel_source or "")
