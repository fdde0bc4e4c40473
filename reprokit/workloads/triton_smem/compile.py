"""Compile a kernel for a named architecture as its launch would specialise it, with or without that GPU.

An argument is given as data (a kit's YAML or a workload's table): a plain number, bool, string or None is
passed as it is (Triton specialises ints equal to 1 or divisible by 16 as a launch does); a list is a tuple
(``activation_fn_args: [1.702, 7.0]``); ``{"ptr": DTYPE}`` is a tensor (16-byte aligned, as torch allocates
one); ``{"dtype": DTYPE}`` is a ``tl.dtype`` constexpr; ``{"jit": "MODULE:NAME"}`` is a ``@triton.jit``
function of the kernel's package passed as a constexpr (a fused activation). Compiles
run in worker processes, each with a compile-only driver that names the target (``GPUTarget("cuda",
120, 32)``): ``kernel.warmup`` then specialises the arguments with Triton's own code, with no GPU.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.tile_sweep import targets

# The element types an argument may have, and Triton's names of them.
DTYPES = {
    "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5",
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
    "int8": "int8",
    "uint8": "uint8",
    "int32": "int32",
    "int64": "int64",
}


def capability_of(arch: str) -> int:
    try:
        return targets.capability_of(arch)
    except ValueError as exc:
        raise WorkloadError(Exit.BAD_PARAMS, str(exc)) from None


def check_args(args: dict[str, Any], where: str) -> None:
    """Refuse an argument spec the compile could not read, naming it (exit 2)."""
    for name, spec in args.items():
        if isinstance(spec, dict) and next(iter(spec), None) == "jit":
            if not (isinstance(spec["jit"], str) and spec["jit"].count(":") == 1):
                raise WorkloadError(Exit.BAD_PARAMS, f"{where}: argument {name!r}: {spec!r} is not {{jit: MODULE:NAME}}")
        elif isinstance(spec, dict):
            kind = next(iter(spec), None)
            if kind not in ("ptr", "dtype") or spec[kind] not in DTYPES:
                raise WorkloadError(Exit.BAD_PARAMS, f"{where}: argument {name!r}: {spec!r} is not {{ptr: DTYPE}} or"
                                    f" {{dtype: DTYPE}} with DTYPE one of {', '.join(DTYPES)}")
        elif isinstance(spec, list):
            if not all(isinstance(item, (int, float, bool)) for item in spec):
                raise WorkloadError(Exit.BAD_PARAMS, f"{where}: argument {name!r}: {spec!r} is a tuple of other than"
                                    " numbers")
        elif not (spec is None or isinstance(spec, (int, float, bool, str))):
            raise WorkloadError(Exit.BAD_PARAMS, f"{where}: argument {name!r}: {spec!r} is not a number, bool, string,"
                                " null or {ptr: DTYPE}")


class _Pointer:
    """What the JIT's specialisation reads of a tensor: a dtype and an address (0: 16-byte aligned)."""

    def __init__(self, dtype: Any):
        self.dtype = dtype

    @staticmethod
    def data_ptr() -> int:
        return 0


class CompileOnlyDriver:
    """Triton's active driver, reduced to naming a target: lets ``warmup`` compile for an absent GPU."""

    def __init__(self, target: Any):
        self.target = target

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def is_active(self) -> bool:
        return True


def _compile_values(args: dict[str, Any]) -> dict[str, Any]:
    import importlib  # noqa: PLC0415

    import triton.language as tl  # noqa: PLC0415

    def value(spec: Any) -> Any:
        if isinstance(spec, dict) and "jit" in spec:
            module, name = spec["jit"].split(":")
            return getattr(importlib.import_module(module), name)
        if isinstance(spec, dict):
            kind = next(iter(spec))
            dtype = getattr(tl, DTYPES[spec[kind]])
            return _Pointer(dtype) if kind == "ptr" else dtype
        return tuple(spec) if isinstance(spec, list) else spec

    return {name: value(spec) for name, spec in args.items()}


def _kernel(module: str, kernel: str, package_dir: str | None) -> Any:
    """The kernel of a written module file, or (``package_dir`` given) of a module of the package written there."""
    if package_dir is None:
        from reprokit.workloads.triton_smem.kernels import load_module  # noqa: PLC0415

        return getattr(load_module(Path(module)), kernel)
    import importlib  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from reprokit.workloads.triton_smem import torch_standin  # noqa: PLC0415

    torch_standin.ensure_importable()
    if package_dir not in sys.path:
        sys.path.insert(0, package_dir)
    return getattr(importlib.import_module(module), kernel)


def compile_task(module: str, kernel: str, args: dict[str, Any], options: dict[str, int], arch: str,
                 package_dir: str | None = None) -> dict[str, Any]:
    """Compile one specialisation for ``arch`` in this (worker) process; a failed compile is a result, never raised.

    ``module`` is a written module file, or with ``package_dir`` a dotted module of the package written there.
    """
    started = time.perf_counter()
    try:
        import triton  # noqa: PLC0415
        from triton.backends.compiler import GPUTarget  # noqa: PLC0415
        from triton.runtime import driver  # noqa: PLC0415

        driver.set_active(CompileOnlyDriver(GPUTarget("cuda", capability_of(arch), 32)))
        fn = _kernel(module, kernel, package_dir)
        fn.device_caches.clear()  # the JIT keeps the first target per device; this worker compiles for several
        compiled = fn.warmup(grid=(1,), **_compile_values(args), **options)
        target = compiled.metadata.target
        if (target.backend, target.arch) != ("cuda", capability_of(arch)):
            raise RuntimeError(f"compiled for {target}, not {arch}")
        return {"arch": arch, "ok": True, "shared_bytes": int(compiled.metadata.shared),
                "num_warps": int(compiled.metadata.num_warps), "num_stages": int(compiled.metadata.num_stages),
                "triton": triton.__version__, "compile_s": round(time.perf_counter() - started, 3)}
    except Exception as exc:  # noqa: BLE001 - a compile error is what this records
        return {"arch": arch, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:1000],
                "compile_s": round(time.perf_counter() - started, 3)}


def triton_version() -> str | None:
    try:
        import triton  # noqa: PLC0415
    except ImportError:
        return None
    return triton.__version__


def compile_all(tasks: list[tuple[Any, ...]], jobs: int | None, on_done: Any = None) -> list[dict[str, Any]]:
    """Every (module, kernel, args, options, arch[, package_dir]) compiled in a pool of worker processes, in order."""
    workers = max(1, min(jobs or os.cpu_count() or 1, 16, len(tasks) or 1))
    results: list[dict[str, Any]] = []
    import multiprocessing  # noqa: PLC0415

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for done, result in enumerate(pool.map(compile_task, *zip(*tasks)) if tasks else [], start=1):
            results.append(result)
            if on_done:
                on_done(done, len(tasks), result)
    return results

