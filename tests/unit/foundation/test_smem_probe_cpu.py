"""The probe on a machine without an NVIDIA driver: a plain report and its own exit code, never a traceback."""

import json
import subprocess
import sys

import pytest

from reprokit.workloads import smem_probe
from reprokit.workloads.contract import Exit


def has_libcuda() -> bool:
    """Whether a fresh process finds a CUDA driver, as the workloads run here do (a library another test loaded
    into this process, the libcuda double say, must not count)."""
    probe = "from reprokit.workloads import smem_probe\ntry:\n    smem_probe.Driver()\nexcept Exception:\n    raise SystemExit(1)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60).returncode == 0


@pytest.mark.skipif(has_libcuda(), reason="this machine has an NVIDIA driver; the no-driver path cannot be seen here")
def test_no_driver_gives_exit_3_and_a_result(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.smem_probe", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == Exit.NO_DRIVER == 3
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("smem-probe: no NVIDIA driver on this host (libcuda.so.1 not found); install the driver,"
                                   " or run in a container with the NVIDIA runtime (--gpus all)")
    result = json.loads((tmp_path / "result.json").read_text())
    assert (result["workload"], result["schema_version"], result["status"]) == ("smem-probe", 1, "no_driver")


def test_bad_params_file(tmp_path):
    params = tmp_path / "p.json"
    params.write_text("[1, 2]")
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.smem_probe", "--params", str(params),
                           "--out-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == Exit.BAD_PARAMS
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["status"] == "bad_params"
    assert result["error"] == f"{params}: parameters must be a JSON object"


def test_probe_ptx_assembles_for_hopper_and_blackwell(tmp_path):
    ptxas = "/usr/local/cuda/bin/ptxas"
    import shutil
    ptxas = shutil.which("ptxas") or (ptxas if shutil.os.path.exists(ptxas) else None)
    if not ptxas:
        pytest.skip("ptxas (CUDA toolkit) is not installed here")
    src = tmp_path / "probe.ptx"
    src.write_bytes(smem_probe.PROBE_PTX)
    for arch in ("sm_90", "sm_120"):
        proc = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(tmp_path / f"{arch}.cubin")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_serve_without_sglang_says_so(tmp_path):
    import importlib.util

    if importlib.util.find_spec("sglang") is not None:
        pytest.skip("sglang is installed here")
    params = tmp_path / "p.json"
    params.write_text('{"model": "/models/GLM-5-NVFP4"}')
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.serve", "--params", str(params), "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == Exit.MISSING_DEPENDENCY
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "missing_dependency"
    assert result["error"].startswith(f"sglang is not installed for {sys.executable}; run this step in the kit's serve image")


def test_relative_out_dir_is_made_absolute(tmp_path):
    if has_libcuda():
        pytest.skip("an NVIDIA driver is present: this test checks the driver-less path")
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.smem_probe", "--out-dir", "rel/out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == Exit.NO_DRIVER
    assert json.loads((tmp_path / "rel" / "out" / "result.json").read_text())["status"] == "no_driver"


def test_triage_step_waits_for_a_server_that_served(tmp_path):
    from reprokit.plan.triage_step import run_step
    from reprokit.records.models import StepEntry

    steps = {"serve": StepEntry("serve", "serve", status="missing_dependency", reason="sglang is not installed")}
    entry = run_step({"logs_from": "serve"}, tmp_path, steps, tmp_path / "steps" / "triage")
    assert entry == {"status": "not_run", "result": None,
                     "reason": "not run: 'serve' did not serve (missing_dependency: sglang is not installed)"}
