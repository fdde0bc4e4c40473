"""The triton-smem step: one kernel of a pinned wheel, each case (arguments and options) compiled per arch.

Parameters (``with:``): ``package`` and ``version`` (the pin), ``wheel`` (staged by the control plane), ``source``
(the file inside the wheel), ``kernel`` (the ``@triton.jit`` function), ``archs``, ``args`` (the kernel's
arguments as ``compile.py`` reads them), ``cases`` (each a ``name``, the ``args`` it changes, ``num_warps``,
``num_stages``), ``jobs``. A new kernel is a kit, not code.

``package_root`` (a directory of the wheel, e.g. ``vllm/third_party/triton_kernels``) and ``import_as`` (the name
its modules import it by, ``triton_kernels``): the kernel calls ``@triton.jit`` helpers of other modules of its
package, so the package is written out whole and ``source``, a file under it, is imported as its module (with a
stand-in for torch where the host has none: ``torch_standin.py``). Only ``source`` is kept in the record.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from reprokit.workloads import kernel_cases
from reprokit.workloads.contract import Exit, WorkloadError, count_progress, progress
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.triton_smem import compile as triton_compile
from reprokit.workloads.triton_smem import kernels

REQUIRED = ("package", "version", "source", "kernel", "cases")


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    missing = [key for key in REQUIRED if not params.get(key)]
    if missing:
        raise WorkloadError(Exit.BAD_PARAMS, f"missing parameters: {', '.join(missing)}")
    archs = kernel_cases.checked_archs(params, ["sm120", "sm90"])
    cases = kernel_cases.full_cases(params, ("num_warps", "num_stages"), triton_compile.check_args)
    if triton_compile.triton_version() is None:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, "triton is not installed for this Python; install the Triton the"
                            " host serves with")
    wheel = kernels.pinned_wheel(str(params["package"]), str(params["version"]), params.get("wheel"))
    package_root = params.get("package_root")
    with tempfile.TemporaryDirectory(prefix="triton-smem-package-") as package_dir:
        if package_root:
            module, torch_used = _package_module(params, wheel, Path(package_dir), out_dir)
        else:
            module, names = kernels.write_module(wheel, str(params["source"]), out_dir)
            if params["kernel"] not in names:
                raise WorkloadError(Exit.BAD_PARAMS, f"{params['source']} has no @triton.jit {params['kernel']}; it"
                                    f" has {', '.join(names)}")
            torch_used = None
        located = (str(module), str(params["kernel"]))
        tasks = [(*located, case["args"], {k: int(case[k]) for k in ("num_warps", "num_stages") if k in case}, arch,
                  package_dir if package_root else None)
                 for case in cases for arch in archs]
        progress(f"triton-smem: {len(tasks)} compiles of {params['kernel']} with Triton {triton_compile.triton_version()}")
        results = triton_compile.compile_all(tasks, params.get("jobs"),
                                             lambda done, total, r: count_progress("triton-smem compile", done, total, r["arch"]))
    by_case: dict[str, dict[str, Any]] = {}
    for (_, _, _, _, arch, _), case, result in zip(tasks, [c for c in cases for _ in archs], results):
        limit = SMEM_OPTIN_BYTES_BY_ARCH[arch]
        shared = result.get("shared_bytes")
        by_case.setdefault(case["name"], {})[arch] = {
            "shared_bytes": shared, "limit_bytes": limit, "fits": None if shared is None else shared <= limit,
            "num_warps": result.get("num_warps"), "num_stages": result.get("num_stages"), "error": result.get("error")}
    return {
        "package": params["package"], "version": params["version"], "wheel": wheel.name,
        "wheel_sha256": wheels.sha256_file(wheel), "source": params["source"], "kernel": params["kernel"],
        **({"package_root": package_root, "import_as": params.get("import_as"), "torch": torch_used} if package_root else {}),
        "triton": triton_compile.triton_version(), "archs": archs,
        "limits_bytes": {arch: SMEM_OPTIN_BYTES_BY_ARCH[arch] for arch in archs},
        "cases": [{k: v for k, v in c.items() if k != "args"} for c in cases], "by_case": by_case,
        "overflowing": {arch: [n for n, row in by_case.items() if row[arch]["fits"] is False] for arch in archs},
    }


def _package_module(params: dict[str, Any], wheel: Path, package_dir: Path, out_dir: Path) -> tuple[str, str]:
    """Write the wheel's ``package_root`` as ``import_as`` under ``package_dir``; keep ``source`` in the record.

    Returns the dotted module of ``source`` and the torch the import had (a version, or ``"stand-in"``), after
    importing it here once, so that a kernel the module lacks is a parameter error, not a failed compile per case.
    """
    import importlib  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from reprokit.workloads.triton_smem import torch_standin  # noqa: PLC0415

    root, import_as, source = str(params["package_root"]), str(params.get("import_as") or ""), str(params["source"])
    if not import_as.isidentifier():
        raise WorkloadError(Exit.BAD_PARAMS, "`package_root` needs `import_as`, the name its modules import it by"
                            " (e.g. triton_kernels)")
    module = kernels.module_name(root, import_as, source)
    written = kernels.extract_package(wheel, root, import_as, package_dir)
    kept = out_dir / "kernels" / Path(source).name
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(written / source[len(root.rstrip("/")) + 1:], kept)
    torch_used = torch_standin.ensure_importable()
    sys.path.insert(0, str(package_dir))
    try:
        loaded = importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - upstream's import failing is the finding to report
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"importing {module} from {wheel.name}:{root} failed:"
                            f" {type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(str(package_dir))
    if not hasattr(loaded, str(params["kernel"])):
        raise WorkloadError(Exit.BAD_PARAMS, f"{source} has no {params['kernel']}")
    return module, torch_used
