"""SMEM probe: what shared memory per block the device really grants.

Reads the limits twice, independently: from torch (when it is installed) and
from the CUDA driver API through ctypes (attributes 8, 81, 97, the SM count
and the compute capability). Then proves the opt-in limit with real launches
of a tiny kernel (PTX, JIT-compiled by the driver, so no nvcc is needed):
dynamic shared memory of exactly the opt-in limit must launch and touch its
last byte; one byte more must be refused, and the driver's error is recorded.

Standard library only (torch is optional), so it runs in any container or
bare host. Usage: ``python -m reprokit.workloads.smem_probe --out-dir DIR``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, main, progress

# CUdevice_attribute values (cuda.h)
ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8
ATTR_MULTIPROCESSOR_COUNT = 16
ATTR_COMPUTE_CAPABILITY_MAJOR = 75
ATTR_COMPUTE_CAPABILITY_MINOR = 76
ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
ATTR_RESERVED_SHARED_MEMORY_PER_BLOCK = 111
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CUDA_ERROR_NO_DEVICE = 100

# Thread 0 writes a marker into the first and the last byte of the dynamic
# shared memory, reads both back, and stores them to global memory.
# Targets sm_50 so the driver can JIT it for any newer GPU.
PROBE_PTX = rb"""
.version 6.0
.target sm_50
.address_size 64
.extern .shared .align 16 .b8 dyn_smem[];
.visible .entry touch_smem(.param .u64 out_ptr, .param .u32 nbytes)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out_ptr];
    ld.param.u32 %r1, [nbytes];
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    mov.u32 %r3, dyn_smem;
    add.u32 %r4, %r3, %r1;
    sub.u32 %r4, %r4, 1;
    st.shared.u8 [%r3], 165;
    st.shared.u8 [%r4], 90;
    ld.shared.u8 %r5, [%r3];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r5;
    ld.shared.u8 %r5, [%r4];
    st.global.u32 [%rd2+4], %r5;
DONE:
    ret;
}
"""
FIRST_MARKER, LAST_MARKER = 165, 90


class Driver:
    """The few CUDA driver API calls the probe needs, through ctypes."""

    def __init__(self) -> None:
        names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
        self.lib = None
        errors = []
        for name in filter(None, names):
            try:
                self.lib = ctypes.CDLL(name)
                self.path = name
                break
            except OSError as exc:
                errors.append(f"{name}: {exc}")
        if self.lib is None:
            raise WorkloadError(
                Exit.NO_DRIVER,
                "no NVIDIA driver on this host (libcuda.so.1 not found); install the driver,"
                " or run in a container with the NVIDIA runtime (--gpus all)",
                tried=errors,
            )

    def error_name(self, code: int) -> str:
        ptr = ctypes.c_char_p()
        if self.lib.cuGetErrorName(code, ctypes.byref(ptr)) == 0 and ptr.value:
            return ptr.value.decode()
        return f"CUDA_ERROR_{code}"

    def error_string(self, code: int) -> str:
        ptr = ctypes.c_char_p()
        if self.lib.cuGetErrorString(code, ctypes.byref(ptr)) == 0 and ptr.value:
            return ptr.value.decode()
        return ""

    def call(self, fn: str, *args: Any) -> int:
        return int(getattr(self.lib, fn)(*args))

    def check(self, fn: str, *args: Any) -> None:
        code = self.call(fn, *args)
        if code != 0:
            raise WorkloadError(
                Exit.CHECK_FAILED, f"{fn} failed: {self.error_name(code)} ({self.error_string(code)})"
            )


def _driver_release() -> str | None:
    """The driver's release (e.g. 580.159.03), from NVML or /proc."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() == 0:
            buf = ctypes.create_string_buffer(96)
            ok = nvml.nvmlSystemGetDriverVersion(buf, 96) == 0
            nvml.nvmlShutdown()
            if ok:
                return buf.value.decode()
    except (OSError, AttributeError):
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        for word in text.split():
            if word.count(".") >= 1 and word.replace(".", "").isdigit():
                return word
    except OSError:
        pass
    return None


def init_driver() -> tuple[Driver, int]:
    """Load libcuda and cuInit; returns the driver and its device count."""
    drv = Driver()
    code = drv.call("cuInit", 0)
    if code == CUDA_ERROR_NO_DEVICE:
        raise WorkloadError(Exit.NO_DEVICE, "the NVIDIA driver sees no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)")
    if code != 0:
        raise WorkloadError(
            Exit.NO_DRIVER,
            f"the CUDA driver failed to initialise: {drv.error_name(code)} ({drv.error_string(code)})",
        )
    count = ctypes.c_int()
    drv.check("cuDeviceGetCount", ctypes.byref(count))
    if count.value == 0:
        raise WorkloadError(Exit.NO_DEVICE, "the NVIDIA driver sees no CUDA device (cuDeviceGetCount = 0)")
    return drv, count.value


def driver_versions(drv: Driver) -> dict[str, Any]:
    version = ctypes.c_int()
    drv.check("cuDriverGetVersion", ctypes.byref(version))
    v = version.value
    return {
        "driver_release": _driver_release(),
        "cuda_driver_api": f"{v // 1000}.{(v % 1000) // 10}",
        "cuda_driver_api_int": v,
        "libcuda": drv.path,
    }


def query_device(drv: Driver, index: int) -> dict[str, Any]:
    """The device's name and limits, from the driver only (no launches)."""
    dev = ctypes.c_int()
    drv.check("cuDeviceGet", ctypes.byref(dev), index)
    name = ctypes.create_string_buffer(256)
    drv.check("cuDeviceGetName", name, 256, dev)

    def attr(attribute: int) -> int | None:
        value = ctypes.c_int()
        code = drv.call("cuDeviceGetAttribute", ctypes.byref(value), attribute, dev)
        return value.value if code == 0 else None

    major = attr(ATTR_COMPUTE_CAPABILITY_MAJOR)
    minor = attr(ATTR_COMPUTE_CAPABILITY_MINOR)
    uuid = (ctypes.c_ubyte * 16)()
    uuid_text = None
    if drv.call("cuDeviceGetUuid", ctypes.byref(uuid), dev) == 0:
        raw = bytes(uuid).hex()
        uuid_text = f"GPU-{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
    return {
        "index": index,
        "name": name.value.decode(errors="replace"),
        "uuid": uuid_text,
        "compute_capability": f"{major}.{minor}",
        "gpu_arch": f"sm{major}{minor}",
        "multiprocessor_count": attr(ATTR_MULTIPROCESSOR_COUNT),
        "max_shared_memory_per_block_bytes": attr(ATTR_MAX_SHARED_MEMORY_PER_BLOCK),
        "max_shared_memory_per_multiprocessor_bytes": attr(ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
        "max_shared_memory_per_block_optin_bytes": attr(ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
        "reserved_shared_memory_per_block_bytes": attr(ATTR_RESERVED_SHARED_MEMORY_PER_BLOCK),
    }


def torch_view(index: int) -> dict[str, Any] | None:
    """The same limits as torch reports them, or why torch could not say."""
    try:
        import torch  # noqa: PLC0415 - optional on the host
    except ImportError:
        return {"available": False, "reason": "torch is not installed"}
    try:
        if not torch.cuda.is_available():
            return {"available": False, "reason": "torch.cuda.is_available() is False", "torch": torch.__version__}
        props = torch.cuda.get_device_properties(index)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds; record, never crash
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}", "torch": torch.__version__}
    return {
        "available": True,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "name": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "multiprocessor_count": props.multi_processor_count,
        "max_shared_memory_per_block_bytes": getattr(props, "shared_memory_per_block", None),
        "max_shared_memory_per_multiprocessor_bytes": getattr(props, "shared_memory_per_multiprocessor", None),
        "max_shared_memory_per_block_optin_bytes": getattr(props, "shared_memory_per_block_optin", None),
    }


def _torch_matches(driver: dict[str, Any], torch_info: dict[str, Any] | None) -> bool | None:
    if not torch_info or not torch_info.get("available"):
        return None
    keys = (
        "compute_capability",
        "multiprocessor_count",
        "max_shared_memory_per_block_bytes",
        "max_shared_memory_per_multiprocessor_bytes",
        "max_shared_memory_per_block_optin_bytes",
    )
    return all(torch_info.get(k) is None or torch_info.get(k) == driver.get(k) for k in keys)


def launch_with_smem(drv: Driver, index: int, nbytes: int) -> dict[str, Any]:
    """Launch the probe kernel with ``nbytes`` of dynamic shared memory; record what the driver says."""
    dev = ctypes.c_int()
    drv.check("cuDeviceGet", ctypes.byref(dev), index)
    ctx = ctypes.c_void_p()
    drv.check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    drv.check("cuCtxSetCurrent", ctx)
    module = ctypes.c_void_p()
    out = ctypes.c_uint64()
    outcome: dict[str, Any] = {"dynamic_shared_bytes": nbytes}
    try:
        drv.check("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(PROBE_PTX))
        func = ctypes.c_void_p()
        drv.check("cuModuleGetFunction", ctypes.byref(func), module, b"touch_smem")
        code = drv.call(
            "cuFuncSetAttribute", func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(nbytes)
        )
        outcome["set_attribute_error_name"] = None if code == 0 else drv.error_name(code)
        if code != 0:
            # As CUTLASS's initialize(): the opt-in itself is refused; raise it to the largest allowed
            # so the launch below shows what the launch path says about the same size.
            limit = ctypes.c_int()
            drv.check("cuDeviceGetAttribute", ctypes.byref(limit), ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev)
            drv.call("cuFuncSetAttribute", func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit)
        drv.check("cuMemAlloc_v2", ctypes.byref(out), ctypes.c_size_t(8))
        drv.check("cuMemsetD8_v2", out, ctypes.c_ubyte(0), ctypes.c_size_t(8))
        arg_ptr = ctypes.c_uint64(out.value)
        arg_n = ctypes.c_uint32(nbytes)
        params = (ctypes.c_void_p * 2)(
            ctypes.cast(ctypes.byref(arg_ptr), ctypes.c_void_p), ctypes.cast(ctypes.byref(arg_n), ctypes.c_void_p)
        )
        code = drv.call(
            "cuLaunchKernel", func, 1, 1, 1, 32, 1, 1, ctypes.c_uint(nbytes), None, params, None
        )
        if code == 0:
            code = drv.call("cuCtxSynchronize")
        outcome["ok"] = code == 0
        outcome["error_name"] = None if code == 0 else drv.error_name(code)
        outcome["error_string"] = None if code == 0 else drv.error_string(code)
        if code == 0:
            host = (ctypes.c_uint32 * 2)()
            drv.check("cuMemcpyDtoH_v2", host, out, ctypes.c_size_t(8))
            outcome["markers_read_back"] = list(host)
            outcome["last_byte_written"] = list(host) == [FIRST_MARKER, LAST_MARKER]
    finally:
        if out.value:
            drv.call("cuMemFree_v2", out)
        if module.value:
            drv.call("cuModuleUnload", module)
        drv.call("cuDevicePrimaryCtxRelease", dev)
    return outcome


def host_facts() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "in_container": Path("/.dockerenv").exists() or "container" in os.environ,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),  # an inventory host pinned to some GPUs
    }


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"host": host_facts()}
    drv, count = init_driver()
    result["driver"] = driver_versions(drv)
    wanted = params.get("device_indices") or list(range(count))
    if not isinstance(wanted, list) or not all(isinstance(i, int) and 0 <= i < count for i in wanted):
        raise WorkloadError(Exit.BAD_PARAMS, f"device_indices must be a list of indexes below {count}, got {wanted!r}")
    devices = []
    all_as_expected = True
    for index in wanted:
        info = query_device(drv, index)
        limit = info["max_shared_memory_per_block_optin_bytes"]
        at_limit = launch_with_smem(drv, index, limit)
        past_limit = launch_with_smem(drv, index, limit + 1)
        torch_info = torch_view(index)
        as_expected = bool(at_limit.get("ok")) and at_limit.get("last_byte_written") is True and not past_limit.get("ok")
        all_as_expected &= as_expected
        # one line a GPU (8 GPUs: 8 lines): what it reports, and what a launch at and one byte past the limit did
        progress(f"smem-probe: GPU {index} {info['name']} ({info['gpu_arch']}): opt-in {limit} B per block; launch"
                 f" with {limit} B: {'ok' if at_limit.get('ok') else at_limit.get('error_name')}, with {limit + 1} B:"
                 f" {'ok' if past_limit.get('ok') else past_limit.get('error_name')}")
        devices.append({
            "index": index,
            "driver": info,
            "torch": torch_info,
            "torch_matches_driver": _torch_matches(info, torch_info),
            "launch_at_optin_limit": at_limit,
            "launch_past_optin_limit": past_limit,
            "limit_behaves_as_reported": as_expected,
        })
    result["device_count"] = count
    result["devices"] = devices
    if not all_as_expected:
        result["_exit"] = Exit.CHECK_FAILED
    return result


if __name__ == "__main__":
    sys.exit(main("smem-probe", run))
