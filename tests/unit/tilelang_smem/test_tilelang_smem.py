"""A TileLang kernel of a wheel as data: its parameters checked, its lowering's shared memory read per arch."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.tilelang_smem import lower, workload
from reprokit.workloads.triton_smem.kernels import pinned_wheel

REPO = Path(__file__).resolve().parents[3]
HAS_TILELANG = all(importlib.util.find_spec(name) is not None for name in ("tilelang", "torch"))
NO_TILELANG = ("tilelang and torch are not installed in this environment (not in the dev lock: 50 MB and 180 MB); the"
               " lowering ran with TileLang 0.1.15 and the CPU torch 2.13.0 on PYTHONPATH, see evidence/catalogue/README.md")


def test_an_arch_names_its_architecture_specific_target_where_the_part_has_one():
    assert [lower.target_arch(a) for a in ("sm121", "sm120", "sm90", "sm89", "sm86")] == [
        "sm_121a", "sm_120a", "sm_90a", "sm_89", "sm_86"]


def test_static_shared_arrays_are_counted_and_an_unknown_type_is_not_guessed():
    source = ("extern __shared__ __align__(1024) uchar buf_dyn_shmem[];\n"
              "  __shared__ __align__(16) uint64_t data_is_ready_mem[2];\n"
              "  __shared__ __align__(16) float g_shared[128];\n")
    assert lower.static_bytes(source) == 2 * 8 + 128 * 4  # the extern dynamic buffer is not static
    assert lower.static_bytes(source + "  __shared__ mystery_t m[4];\n") is None


@pytest.mark.parametrize(("params", "message"), [
    ({"package": "flash-qla"}, "missing parameters: version, package_root, source, kernel, cases"),
    ({"archs": ["sm999"]}, "arch 'sm999': use one of sm80, sm86, sm89, sm90, sm100, sm103, sm120, sm121"),
    ({"cases": [{"name": "a", "args": {}}, {"name": "a", "args": {}}]}, "cases[1]: the case name 'a' is used twice"),
    ({"cases": [{"name": "a", "args": {}, "stages": 2}]}, "cases[0] (a): unknown keys ['stages']"),
    ({"source": "other/prepare_h.py"}, "`source` other/prepare_h.py is not a .py file under `package_root` flash_qla"),
])
def test_bad_parameters_are_exit_2_naming_what_to_change(params, message, tmp_path):
    base = {"package": "flash-qla", "version": "0.1.3", "package_root": "flash_qla", "kernel": "tilelang_prepare_h",
            "source": "flash_qla/ops/gated_delta_rule/chunk/hopper/prepare_h.py", "cases": [{"name": "a", "args": {}}]}
    given = {"package": "flash-qla"} if params == {"package": "flash-qla"} else {**base, **params}
    with pytest.raises(WorkloadError) as caught:
        workload.run(given, tmp_path)
    assert (caught.value.code, str(caught.value)) == (Exit.BAD_PARAMS, message)


@pytest.mark.skipif(not HAS_TILELANG, reason=NO_TILELANG)
def test_the_prepare_h_kit_lowers_to_the_threads_figure(tmp_path):
    """FlashQLA #4's 196608 B, lowered for sm_121a on a machine with no GPU."""
    try:
        wheel = pinned_wheel("flash-qla", "0.1.3", None)
    except WorkloadError as exc:
        pytest.skip(f"flash-qla 0.1.3's wheel: {exc}")
    kit = yaml.safe_load((REPO / "kits" / "tilelang-prepare-h.yml").read_text())
    step = next(s for s in kit["steps"] if s["name"] == "hopper-prepare-h")
    params = {**step["with"], "version": "0.1.3", "wheel": str(wheel), "archs": ["sm121"]}
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.tilelang_smem", "--params", str(params_path),
                           "--out-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=600, cwd=REPO)
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert proc.returncode == 0, result.get("error")
    assert result["by_case"]["chunk-64"]["sm121"]["dynamic_bytes"] == 196608
    assert result["overflowing"] == {"sm121": ["chunk-64"]}
