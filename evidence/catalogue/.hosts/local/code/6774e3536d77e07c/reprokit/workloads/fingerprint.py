"""Environment fingerprint of the host, taken at the start of every run.

GPU names, compute capabilities, SM counts, shared-memory limits (driver API,
no launches), driver and CUDA versions, and the versions of the packages the
kits pin. Standard library only; a host without a GPU gives a fingerprint
that says so, with exit code 0 (the fingerprint itself did not fail).
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from reprokit.workloads import smem_probe
from reprokit.workloads.contract import WorkloadError, main

PACKAGES = (
    "torch", "triton", "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache", "sglang",
    "sgl-kernel", "cuda-python", "nvidia-cutlass-dsl", "vllm",
)


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def nvcc_version() -> str | None:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not nvcc:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if "release" in line:
            return line.split("release", 1)[1].split(",")[0].strip()
    return None


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {
        "host": smem_probe.host_facts(),
        "python_executable": sys.executable,
        "packages": package_versions(),
        "nvcc": nvcc_version(),
    }
    try:
        drv, count = smem_probe.init_driver()
    except WorkloadError as exc:
        result.update(gpu_status=exc.code.name.lower(), gpu_reason=str(exc), devices=[], driver=None)
        return result
    result["driver"] = smem_probe.driver_versions(drv)
    result["devices"] = [smem_probe.query_device(drv, i) for i in range(count)]
    result["gpu_status"] = "ok"
    result["gpu_reason"] = None
    return result


if __name__ == "__main__":
    sys.exit(main("fingerprint", run))
