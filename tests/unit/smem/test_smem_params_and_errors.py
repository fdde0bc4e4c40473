"""Parameters, and the clear one-line errors: missing nvcc, unfetchable wheel, compile error."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.static_smem.nvcc import find_nvcc, first_error_line
from reprokit.workloads.static_smem.options import Options

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = "flashinfer/data/csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/launchers/moe_gemm_tma_ws_launcher.inl"


def run_workload(tmp_path: Path, params: dict) -> tuple[int, dict, list[str]]:
    params_file = tmp_path / "params.json"
    params_file.write_text(json.dumps(params))
    done = subprocess.run([sys.executable, "-m", "reprokit.workloads.static_smem", "--params", str(params_file),
                           "--out-dir", str(tmp_path / "out")], capture_output=True, text=True, cwd=REPO, timeout=900)
    assert done.stdout == ""
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    return done.returncode, result, done.stderr.splitlines()


# --- parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize(("params", "message"), [
    ({}, "param `flashinfer`"),
    ({"flashinfer": "0.6.3", "arch": "sm89"}, "arch 'sm89' is not analysed"),
    ({"flashinfer": "0.6.3", "arch": "host"}, "arch: host needs param `probe_result`"),
    ({"flashinfer": "0.6.3", "variants": ["128x256"]}, "variants must be a list of tiles"),
    ({"flashinfer": "0.6.3", "output_dtypes": ["fp8"]}, "output_dtypes"),
    ({"flashinfer": "0.6.3", "optin_limit_bytes": -1}, "optin_limit_bytes must be a positive integer"),
    ({"flashinfer": "0.6.3", "colour": "red"}, "unknown parameter(s) colour"),
])
def test_bad_params(params: dict, message: str) -> None:
    with pytest.raises(WorkloadError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        Options.from_params(params)
    assert caught.value.code == Exit.BAD_PARAMS


def test_arch_and_optin_limit_from_a_real_probe_result() -> None:
    probe = sorted(REPO.glob("evidence/h200*/**/steps/probe/result.json"))
    if not probe:
        pytest.skip("no smem-probe evidence in evidence/")
    options = Options.from_params({"flashinfer": "0.6.3", "arch": "host", "probe_result": str(probe[0])})
    assert options.arch.name == "sm90"  # the committed evidence is an H200
    assert options.optin_limit_bytes == 232448
    explicit = Options.from_params({"flashinfer": "0.6.3", "probe_result": str(probe[0]), "optin_limit_bytes": 101376})
    assert explicit.arch.name == "sm120" and explicit.optin_limit_bytes == 101376


def test_variant_filters() -> None:
    options = Options.from_params({"flashinfer": "0.6.3", "variants": ["256x128x128", 3, "gemm1"]})
    entry = {"tactic": 15, "tile": "256x128x128", "op": "trtllm::fused_moe::gemm2"}
    assert options.selects(entry)
    assert options.selects({"tactic": 3, "tile": "128x128x128", "op": "trtllm::fused_moe::gemm1"})
    assert not options.selects({"tactic": 9, "tile": "128x128x128", "op": "trtllm::fused_moe::gemm2"})


def test_bad_version_string_exits_2(tmp_path: Path) -> None:
    code, result, stderr = run_workload(tmp_path, {"flashinfer": "latest", "cache_dir": str(tmp_path / "cache")})
    assert code == Exit.BAD_PARAMS and result["status"] == "bad_params"
    assert stderr == ["static-smem: flashinfer: 'latest' is not a version number (e.g. \"0.6.3\")"]


# --- missing nvcc -------------------------------------------------------------------------------

def fake_wheel(path: Path) -> Path:
    """A wheel with the layout the analysis needs and nothing to compile: enough to reach nvcc."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(LAUNCHER, "// empty\n")
    return path


def test_missing_nvcc_is_one_clear_line(tmp_path: Path) -> None:
    code, result, stderr = run_workload(tmp_path, {
        "flashinfer": "0.6.3", "wheel": str(fake_wheel(tmp_path / "fake.whl")), "nvcc": "/nonexistent/bin/nvcc",
        "cache_dir": str(tmp_path / "cache")})
    assert code == Exit.MISSING_DEPENDENCY and result["status"] == "missing_dependency"
    assert result["error"] == ("nvcc not found (looked in param nvcc=/nonexistent/bin/nvcc); install the CUDA "
                               "toolkit >= 12.8 or pass its path as param `nvcc`")
    assert stderr[-1] == f"static-smem: {result['error']}"


def test_nvcc_search_without_one_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(WorkloadError, match=r"nvcc not found \(looked in \$CUDA_HOME/bin, PATH, /nowhere/nvcc\)") as caught:
        find_nvcc(default_locations=("/nowhere/nvcc",))
    assert caught.value.code == Exit.MISSING_DEPENDENCY


def test_too_old_nvcc_is_named(tmp_path: Path) -> None:
    old = tmp_path / "nvcc"
    old.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    old.chmod(0o755)
    with pytest.raises(WorkloadError, match="nvcc 12.4.131 at .* is older than 12.8") as caught:
        find_nvcc(str(old))
    assert caught.value.code == Exit.MISSING_DEPENDENCY


# --- unfetchable wheel ------------------------------------------------------------------------------

def test_missing_local_wheel(tmp_path: Path) -> None:
    code, result, _ = run_workload(tmp_path, {"flashinfer": "0.6.3", "wheel": str(tmp_path / "nope.whl"),
                                              "cache_dir": str(tmp_path / "cache")})
    assert code == Exit.MISSING_DEPENDENCY
    assert result["error"] == f"wheel {tmp_path / 'nope.whl'} does not exist"


@pytest.mark.network
def test_a_version_the_index_does_not_have(tmp_path: Path) -> None:
    code, result, stderr = run_workload(tmp_path, {"flashinfer": "0.0.999", "cache_dir": str(tmp_path / "cache")})
    assert code == Exit.MISSING_DEPENDENCY
    assert result["error"] == ("flashinfer-python==0.0.999: no such wheel on the package index "
                               "(pip download found no matching distribution); offline, put "
                               f"flashinfer_python-0.0.999-py3-none-any.whl in {tmp_path / 'cache' / 'wheels'} on this "
                               "host, or in the control machine's cache (~/.cache/reprokit/wheels), which stages it here")
    assert stderr[-1] == f"static-smem: {result['error']}"


# --- compile error ----------------------------------------------------------------------------------

def test_first_error_line() -> None:
    log = "$ nvcc ...\nIn file included from a.h:1,\nx.inl(3): error: identifier \"flaot\" is undefined\n  more\n"
    assert first_error_line(log) == 'x.inl(3): error: identifier "flaot" is undefined'
    assert first_error_line("just\nnoise\n") == "noise"


@pytest.mark.network
def test_a_compile_error_is_one_line_and_the_log_is_kept(tmp_path: Path, fetch_wheel, nvcc) -> None:
    good = fetch_wheel("0.6.3").path
    broken = tmp_path / "flashinfer_python-0.6.3-py3-none-any.whl"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == LAUNCHER:
                data = data.replace(b"using ElementAccumulator = float;", b"using ElementAccumulator = flaot;")
            target.writestr(item, data)
    code, result, stderr = run_workload(tmp_path, {
        "flashinfer": "0.6.3", "wheel": str(broken), "variants": ["128x128x128"], "output_dtypes": ["bf16"],
        "cache_dir": str(tmp_path / "cache")})
    assert code == Exit.CHECK_FAILED and result["status"] == "check_failed"
    log = Path(result["compile_log"])
    assert result["failed_compile"] == "kernels" and log == tmp_path / "out" / "logs" / "kernels.log"
    assert result["error"].startswith("nvcc failed on kernels (flashinfer 0.6.3, sm120): ")
    assert 'identifier "flaot" is undefined' in result["error"] and "\n" not in result["error"]
    assert result["error"].endswith(f"[full log: {log}]")
    full = log.read_text()
    assert full.startswith("$ ") and "-DCOMPILE_BLACKWELL_SM120_TMA_GROUPED_GEMMS" in full
    assert full.count("error") > result["error"].count("error")  # the wall stays in the log
    assert not any("flaot" in line for line in stderr[:-1])  # the terminal gets the one line only


def test_invoke_smem_function_maps_exit_codes(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from reprokit.commands.smem import run_smem
    from reprokit.errors import ExitCode

    assert run_smem("latest", "sm120", False, None, None, cache_dir=tmp_path / "cache") == ExitCode.BAD_INPUT
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0] == "static-smem: flashinfer: 'latest' is not a version number (e.g. \"0.6.3\")"
    assert "run directory kept" in captured.err
