"""The libcuda double behaves as the driver from the outside: the workloads read it, and it refuses where the driver does."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprokit.workloads.smem_probe import PROBE_PTX
from tests.conftest import REPO
from tests.doubles.libcuda import libcuda

CUDA_SUCCESS, INVALID_VALUE, NOT_INITIALIZED, NO_BINARY_FOR_GPU, INVALID_PTX, NOT_FOUND = 0, 1, 3, 209, 218, 500


def workload(module: str, out_dir: Path, **env: str) -> tuple[int, dict]:
    environ = {**os.environ, "LD_LIBRARY_PATH": str(libcuda().parent), "PYTHONPATH": str(REPO), **env}
    proc = subprocess.run([sys.executable, "-m", module, "--out-dir", str(out_dir)], env=environ, capture_output=True,
                          text=True, timeout=60)
    return proc.returncode, json.loads((out_dir / "result.json").read_text())


def test_the_probe_finds_the_default_gpu_and_its_limit_holds_to_the_byte(tmp_path):
    code, result = workload("reprokit.workloads.smem_probe", tmp_path)
    assert code == 0 and result["device_count"] == 1
    (device,) = result["devices"]
    driver = device["driver"]
    assert (driver["name"], driver["gpu_arch"], driver["multiprocessor_count"]) == (
        "NVIDIA RTX PRO 6000 Blackwell (reprokit test double)", "sm120", 188)
    assert (driver["max_shared_memory_per_block_optin_bytes"], driver["max_shared_memory_per_multiprocessor_bytes"],
            driver["max_shared_memory_per_block_bytes"]) == (101376, 102400, 49152)
    assert device["launch_at_optin_limit"] == {"dynamic_shared_bytes": 101376, "set_attribute_error_name": None,
                                               "ok": True, "error_name": None, "error_string": None,
                                               "markers_read_back": [165, 90], "last_byte_written": True}
    assert device["launch_past_optin_limit"] == {"dynamic_shared_bytes": 101377,
                                                 "set_attribute_error_name": "CUDA_ERROR_INVALID_VALUE", "ok": False,
                                                 "error_name": "CUDA_ERROR_INVALID_VALUE", "error_string": "invalid argument"}
    assert result["driver"]["cuda_driver_api"] == "13.0" and device["limit_behaves_as_reported"] is True


def test_another_arch_and_count_and_a_driver_without_devices(tmp_path):
    code, result = workload("reprokit.workloads.fingerprint", tmp_path / "h200", LIBCUDA_DOUBLE_ARCH="sm90",
                            LIBCUDA_DOUBLE_COUNT="2")
    assert code == 0
    assert [(d["name"], d["gpu_arch"], d["max_shared_memory_per_block_optin_bytes"]) for d in result["devices"]] == [
        ("NVIDIA H200 (reprokit test double)", "sm90", 232448)] * 2
    assert len({d["uuid"] for d in result["devices"]}) == 2
    code, result = workload("reprokit.workloads.fingerprint", tmp_path / "none", LIBCUDA_DOUBLE_COUNT="0")
    assert (code, result["gpu_status"], result["gpu_reason"], result["devices"]) == (
        0, "no_device", "the NVIDIA driver sees no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)", [])


@pytest.fixture
def cuda(monkeypatch):
    for key in ("LIBCUDA_DOUBLE_ARCH", "LIBCUDA_DOUBLE_COUNT", "LIBCUDA_DOUBLE_OPTIN_BYTES", "LIBCUDA_DOUBLE_SM_BYTES"):
        monkeypatch.delenv(key, raising=False)
    return ctypes.CDLL(str(libcuda()))


def test_it_refuses_what_the_driver_refuses(cuda):
    count = ctypes.c_int()
    assert cuda.cuDeviceGetCount(ctypes.byref(count)) == NOT_INITIALIZED  # the only test that loads it in this process
    assert cuda.cuInit(1) == INVALID_VALUE and cuda.cuInit(0) == CUDA_SUCCESS
    ctx, module, func = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == CUDA_SUCCESS
    assert cuda.cuCtxSetCurrent(ctx) == CUDA_SUCCESS
    assert cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(b"\x7fELF\x02\x01")) == NO_BINARY_FOR_GPU
    newer = PROBE_PTX.replace(b".target sm_50", b".target sm_130")
    assert cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(newer)) == INVALID_PTX
    assert cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(PROBE_PTX)) == CUDA_SUCCESS
    assert cuda.cuModuleGetFunction(ctypes.byref(func), module, b"other") == NOT_FOUND
    assert cuda.cuModuleGetFunction(ctypes.byref(func), module, b"touch_smem") == CUDA_SUCCESS
    out = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(8)) == CUDA_SUCCESS
    arg_ptr, arg_n = ctypes.c_uint64(out.value), ctypes.c_uint32(49153)
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(arg_ptr), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(arg_n), ctypes.c_void_p))
    # without opt-in a function gets 48 KiB of dynamic shared memory: one byte more is refused at launch
    assert cuda.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, ctypes.c_uint(49153), None, params, None) == INVALID_VALUE
    assert cuda.cuLaunchKernel(func, 1, 1, 1, 1025, 1, 1, ctypes.c_uint(0), None, params, None) == INVALID_VALUE
    assert cuda.cuFuncSetAttribute(func, 8, ctypes.c_int(101377)) == INVALID_VALUE
    assert cuda.cuFuncSetAttribute(func, 8, ctypes.c_int(101376)) == CUDA_SUCCESS
    assert cuda.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, ctypes.c_uint(49153), None, params, None) == CUDA_SUCCESS
    assert cuda.cuCtxSynchronize() == CUDA_SUCCESS
    assert cuda.cuMemFree_v2(out) == CUDA_SUCCESS
    assert cuda.cuModuleUnload(module) == CUDA_SUCCESS
    assert cuda.cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS
