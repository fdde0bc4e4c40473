"""The tilelang-smem step: one TileLang kernel of a pinned wheel, each case (the jit function's arguments) per arch.

Parameters (``with:``): ``package`` and ``version`` (the pin), ``wheel`` (staged by the control plane),
``package_root`` (the wheel's directory of the package, e.g. ``flash_qla``: written out whole and imported under its
own name), ``source`` (the file under it), ``kernel`` (the ``@tilelang.jit`` function), ``archs``, ``args`` (its
arguments by name: numbers, strings such as ``"bfloat16"``, booleans), ``cases`` (each a ``name`` and the ``args`` it
changes). A new kernel is a kit, not code. ``source`` is kept in the record under ``kernels/``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from reprokit.workloads import kernel_cases
from reprokit.workloads.contract import Exit, WorkloadError, count_progress, progress
from reprokit.workloads.facts.smem_fit import fit
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.tilelang_smem import lower
from reprokit.workloads.triton_smem import kernels

REQUIRED = ("package", "version", "package_root", "source", "kernel", "cases")


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    missing = [key for key in REQUIRED if not params.get(key)]
    if missing:
        raise WorkloadError(Exit.BAD_PARAMS, f"missing parameters: {', '.join(missing)}")
    archs = kernel_cases.checked_archs(params, ["sm121", "sm90"])
    cases = kernel_cases.full_cases(params, ())
    root, source = str(params["package_root"]).rstrip("/"), str(params["source"])
    if not source.startswith(root + "/") or not source.endswith(".py"):
        raise WorkloadError(Exit.BAD_PARAMS, f"`source` {source} is not a .py file under `package_root` {root}")
    tilelang_version, torch_version = lower.versions()
    if tilelang_version is None or torch_version is None:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, "tilelang and torch must be installed for this Python (TileLang"
                            " lowers the kernel; the kernel's package imports torch)")
    wheel = kernels.pinned_wheel(str(params["package"]), str(params["version"]), params.get("wheel"))
    import_as = Path(root).name
    with tempfile.TemporaryDirectory(prefix="tilelang-smem-package-") as package_dir:
        kernels.extract_package(wheel, root, import_as, Path(package_dir))
        kept = out_dir / "kernels" / Path(source).name
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(package_dir) / import_as / source[len(root) + 1:], kept)
        jit_kernel = lower.load_kernel(Path(package_dir), import_as, root, source, str(params["kernel"]))
        progress(f"tilelang-smem: {len(cases) * len(archs)} lowerings of {params['kernel']} with TileLang"
                 f" {tilelang_version}")
        by_case: dict[str, dict[str, Any]] = {}
        done = 0
        for case in cases:
            for arch in archs:
                limit = SMEM_OPTIN_BYTES_BY_ARCH[arch]
                row: dict[str, Any] = {"dynamic_bytes": None, "static_bytes": None, "limit_bytes": limit, "fits": None,
                                       "target": lower.target_arch(arch), "error": None}
                try:
                    row["dynamic_bytes"], row["static_bytes"] = lower.shared_bytes(jit_kernel, case["args"], arch)
                    row["fits"] = fit(row["dynamic_bytes"], row["static_bytes"] or 0, limit).fits
                except Exception as exc:  # noqa: BLE001 - a case TileLang refuses is a finding of that case
                    row["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else ''}"
                by_case.setdefault(case["name"], {})[arch] = row
                done += 1
                count_progress("tilelang-smem lower", done, len(cases) * len(archs), arch)
    return {
        "package": params["package"], "version": params["version"], "wheel": wheel.name,
        "wheel_sha256": wheels.sha256_file(wheel), "package_root": root, "source": source,
        "kernel": params["kernel"], "tilelang": tilelang_version, "torch": torch_version, "archs": archs,
        "limits_bytes": {arch: SMEM_OPTIN_BYTES_BY_ARCH[arch] for arch in archs},
        "cases": [{k: v for k, v in c.items() if k != "args"} for c in cases], "by_case": by_case,
        "overflowing": {arch: [n for n, row in by_case.items() if row[arch]["fits"] is False] for arch in archs},
    }
