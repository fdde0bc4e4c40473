"""A kernel of a wheel as data: its @triton.jit functions extracted verbatim, arguments checked, compiled per arch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.triton_smem import compile as triton_compile
from reprokit.workloads.triton_smem import kernels
from reprokit.workloads.triton_smem.kernels import pinned_wheel
from tests.unit.triton_kits.conftest import HAS_TRITON, NO_TRITON

REPO = Path(__file__).resolve().parents[3]
DECODE = "sglang/srt/layers/attention/triton_ops/decode_attention.py"


def test_only_the_jit_functions_and_triton_imports_are_kept(sglang_wheel, tmp_path):
    path, names = kernels.write_module(sglang_wheel, DECODE, tmp_path)
    assert names == ["tanh", "_fwd_kernel_stage1", "_fwd_grouped_kernel_stage1", "_fwd_kernel_stage2"]
    text = path.read_text()
    assert "sglang" not in text.split('"""', 2)[2]  # no import of sglang's package, only its kernels
    assert text.count("\n@triton.jit\n") == 4


def test_a_member_the_wheel_lacks_or_without_kernels_is_named(sglang_wheel, tmp_path):
    with pytest.raises(WorkloadError) as caught:
        kernels.write_module(sglang_wheel, "sglang/no/such.py", tmp_path)
    assert (caught.value.code, str(caught.value)) == (
        Exit.BAD_PARAMS, f"{sglang_wheel.name} has no sglang/no/such.py; check the step's `source`")
    with pytest.raises(WorkloadError) as caught:
        kernels.write_module(sglang_wheel, "sglang/version.py", tmp_path)
    assert str(caught.value) == f"{sglang_wheel.name}:sglang/version.py defines no @triton.jit function"


UPSTREAM_SHAPES = '''
import torch
from vllm.triton_utils import tl, triton

float8_info = torch.finfo(torch.float8_e4m3fn)


def _launch_metadata(grid, kernel, args):
    return {"name": kernel.name}


@triton.jit(launch_metadata=_launch_metadata)
def persistent(a_ptr, N: tl.constexpr, FP8_MIN: tl.constexpr = float8_info.min, SCALE: tl.constexpr = 2 * 8):
    tl.store(a_ptr, N)
'''


def test_a_packages_triton_reexport_and_host_hooks_are_read_as_the_kernel_needs():
    """vLLM's `from vllm.triton_utils import tl, triton`, sglang's launch_metadata hook and vLLM's FP8_MIN default."""
    text, names = kernels.jit_source(UPSTREAM_SHAPES, "upstream.py")
    body = text.split('"""', 2)[2]
    assert names == ["persistent"]
    assert body.splitlines()[2:6] == ["import triton.language as tl", "import triton", "", "@triton.jit()"]
    assert "def persistent(a_ptr, N: tl.constexpr, FP8_MIN: tl.constexpr=None, SCALE: tl.constexpr=2 * 8):" in body
    assert "torch" not in body and "float8_info" not in body and "_launch_metadata" not in body
    compile(text, "upstream.py", "exec")  # and it imports with no torch and no vllm


def test_an_import_of_other_names_of_a_package_is_not_taken_for_triton():
    text, _ = kernels.jit_source("from vllm.triton_utils import HAS_TRITON, tl\n\n@triton.jit\ndef k(x):\n    pass\n", "f.py")
    assert "HAS_TRITON" not in text and "import triton.language" not in text


def test_argument_specs_are_checked_before_any_compile():
    triton_compile.check_args({"Q": {"ptr": "bf16"}, "n": 16, "scale": 0.5, "bias": None, "t": {"dtype": "fp32"}}, "x")
    with pytest.raises(WorkloadError) as caught:
        triton_compile.check_args({"K_Buffer": {"ptr": "fp4"}}, "cases[1] (fp8)")
    assert str(caught.value) == ("cases[1] (fp8): argument 'K_Buffer': {'ptr': 'fp4'} is not {ptr: DTYPE} or"
                                 " {dtype: DTYPE} with DTYPE one of fp8e4nv, fp8e5, bf16, fp16, fp32, int8, uint8, int32, int64")
    with pytest.raises(WorkloadError) as caught:
        triton_compile.check_args({"x": {"sixteen": 16}}, "cases[0]")
    assert str(caught.value).startswith("cases[0]: argument 'x': {'sixteen': 16} is not {ptr: DTYPE}")


def test_a_package_kernel_takes_jit_functions_tuples_and_strings():
    triton_compile.check_args({"ACTIVATION_FN": {"jit": "triton_kernels.swiglu:swiglu_fn"},
                               "activation_fn_args": [1.702, 7.0], "SWIZZLE_MX_VALUE": "HOPPER_VALUE"}, "x")
    with pytest.raises(WorkloadError) as caught:
        triton_compile.check_args({"ACTIVATION_FN": {"jit": "triton_kernels.swiglu.swiglu_fn"}}, "cases[0]")
    assert str(caught.value) == ("cases[0]: argument 'ACTIVATION_FN': {'jit': 'triton_kernels.swiglu.swiglu_fn'} is not"
                                 " {jit: MODULE:NAME}")
    with pytest.raises(WorkloadError) as caught:
        triton_compile.check_args({"fn_args": [1.0, "limit"]}, "cases[0]")
    assert str(caught.value) == "cases[0]: argument 'fn_args': [1.0, 'limit'] is a tuple of other than numbers"


def _mla_params(sglang_wheel: Path) -> dict:
    kit = yaml.safe_load((REPO / "kits" / "triton-mla-decode.yml").read_text())
    return {**kit["steps"][0]["with"], "version": "0.5.9", "wheel": str(sglang_wheel)}


def run_workload(params: dict, out_dir: Path) -> tuple[int, dict]:
    params_path = out_dir.parent / f"{out_dir.name}.json"
    params_path.write_text(json.dumps(params))
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.triton_smem", "--params", str(params_path),
                           "--out-dir", str(out_dir)], capture_output=True, text=True, timeout=300, cwd=REPO)
    return proc.returncode, json.loads((out_dir / "result.json").read_text())


def test_a_case_named_twice_or_with_an_unknown_key_is_exit_2(sglang_wheel, tmp_path):
    params = _mla_params(sglang_wheel)
    twice = {**params, "cases": [params["cases"][0], params["cases"][0]]}
    code, result = run_workload(twice, tmp_path / "twice")
    assert (code, result["error"]) == (2, "cases[1]: the case name 'bf16-kv-2-stages' is used twice")
    typo = {**params, "cases": [{**params["cases"][0], "num_stage": 2}]}
    code, result = run_workload(typo, tmp_path / "typo")
    assert (code, result["error"]) == (2, "cases[0] (bf16-kv-2-stages): unknown keys ['num_stage']")


@pytest.mark.skipif(not HAS_TRITON, reason=NO_TRITON)
def test_the_mla_kit_compiles_to_its_recorded_bytes_on_both_archs(sglang_wheel, tmp_path):
    code, result = run_workload({**_mla_params(sglang_wheel), "jobs": 2}, tmp_path / "mla")
    assert code == 0, result.get("error")
    assert {name: {arch: row["shared_bytes"] for arch, row in rows.items()} for name, rows in result["by_case"].items()} == {
        "bf16-kv-2-stages": {"sm120": 89088, "sm90": 89088}, "fp8-kv-2-stages": {"sm120": 53760, "sm90": 54272},
        "fp8-kv-3-stages": {"sm120": 54144, "sm90": 54656}, "bf16-kv-3-stages": {"sm120": 89472, "sm90": 89472}}
    assert result["overflowing"] == {"sm120": [], "sm90": []}


@pytest.mark.skipif(not HAS_TRITON, reason=NO_TRITON)
def test_the_fp8_default_compiles_to_the_upstream_figure(sglang_wheel, tmp_path):
    from reprokit.workloads.triton_moe_configs import configs, predict

    path, _ = kernels.write_module(sglang_wheel, configs.KERNEL_SOURCE, tmp_path)
    default = configs.default_configs(sglang_wheel)[0]["config"]
    args = predict.kernel_args(default, "fp8_w8a8", None, False, False, 1024, 4096, 8)
    tasks = [(str(path), "fused_moe_kernel", args, predict.options(default), arch) for arch in ("sm120", "sm90")]
    results = triton_compile.compile_all(tasks, 2)
    assert [(r["arch"], r["shared_bytes"]) for r in results] == [("sm120", 147456), ("sm90", 196608)]


@pytest.mark.skipif(not HAS_TRITON, reason=NO_TRITON)
def test_the_extend_attention_kit_compiles_to_the_threads_figure(sglang_wheel, tmp_path):
    kit = yaml.safe_load((REPO / "kits" / "triton-extend-attention.yml").read_text())
    params = {**kit["steps"][0]["with"], "version": "0.5.9", "wheel": str(sglang_wheel), "jobs": 2}
    code, result = run_workload(params, tmp_path / "extend")
    assert code == 0, result.get("error")
    assert {name: {arch: row["shared_bytes"] for arch, row in rows.items()} for name, rows in result["by_case"].items()} == {
        "hopper-blocks": {"sm120": 106496, "sm90": 106496}, "sm120-blocks": {"sm120": 71680, "sm90": 71680},
        "mha-prefill-hopper-blocks": {"sm120": 65536, "sm90": 65536}}
    assert result["overflowing"] == {"sm120": ["hopper-blocks"], "sm90": []}


@pytest.mark.skipif(not HAS_TRITON, reason=NO_TRITON)
def test_the_batch_invariant_kit_compiles_to_the_threads_figure(tmp_path):
    """sglang's persistent matmul: a `launch_metadata` hook in its decorator, compiled for sm89 as for SM120."""
    try:
        wheel = pinned_wheel("sglang", "0.5.17", None)
    except WorkloadError as exc:
        pytest.skip(f"sglang 0.5.17's wheel: {exc}")
    kit = yaml.safe_load((REPO / "kits" / "triton-batch-invariant-matmul.yml").read_text())
    params = {**kit["steps"][0]["with"], "version": "0.5.17", "wheel": str(wheel), "jobs": 2}
    code, result = run_workload(params, tmp_path / "matmul")
    assert code == 0, result.get("error")
    assert result["by_case"]["fp16-default"]["sm89"]["shared_bytes"] == 106496
    assert result["overflowing"] == {"sm89": ["fp16-default"], "sm120": ["fp16-default"], "sm90": []}
