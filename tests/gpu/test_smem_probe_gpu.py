"""The probe on a real GPU: the opt-in limit launches, one byte more is refused."""

import json
import subprocess
import sys

import pytest

from reprokit.workloads import smem_probe
from reprokit.workloads.contract import WorkloadError


def gpu_reason() -> str | None:
    try:
        smem_probe.init_driver()
    except WorkloadError as exc:
        return str(exc)
    return None


REASON = gpu_reason()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(REASON is not None, reason=f"no CUDA GPU: {REASON}")]


def test_probe_on_gpu(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.smem_probe", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    for device in result["devices"]:
        limit = device["driver"]["max_shared_memory_per_block_optin_bytes"]
        assert device["launch_at_optin_limit"] == {
            "dynamic_shared_bytes": limit, "set_attribute_error_name": None, "ok": True, "error_name": None,
            "error_string": None, "markers_read_back": [165, 90], "last_byte_written": True}
        assert device["launch_past_optin_limit"]["dynamic_shared_bytes"] == limit + 1
        assert device["launch_past_optin_limit"]["error_name"] == "CUDA_ERROR_INVALID_VALUE"
