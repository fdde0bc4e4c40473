"""The triton-moe-configs workload as the host runs it (`python -m`), with the formula alone and without Triton."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reprokit.workloads.triton_moe_configs.predict import predicted_shared_bytes
from tests.unit.triton_kits.conftest import HAS_TRITON

REPO = Path(__file__).resolve().parents[3]
EVIDENCE = next((REPO / "evidence" / "triton-cross-compile").glob("*-triton-moe-configs-*/"))


def run_workload(params: dict, out_dir: Path) -> tuple[int, dict]:
    params_path = out_dir.parent / "params.json"
    params_path.write_text(json.dumps(params))
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.triton_moe_configs", "--params", str(params_path),
                           "--out-dir", str(out_dir)], capture_output=True, text=True, timeout=120, cwd=REPO)
    return proc.returncode, json.loads((out_dir / "result.json").read_text())


def test_formula_run_judges_defaults_and_tuned_files_and_writes_sm120_files(sglang_wheel, tmp_path):
    code, result = run_workload({"wheel": str(sglang_wheel), "sglang": "0.5.9", "compile": False,
                                 "config_dirs": ["triton_3_5_1"]}, tmp_path / "out")
    assert code == 0 and result["status"] == "ok"
    assert result["defaults_overflowing"] == {"sm120": ["dtype == 'fp8_w8a8' and block_shape is None"], "sm90": []}
    tuned = result["tuned"]
    assert (tuned["files"], tuned["configs"], tuned["configs_overflowing"], tuned["files_overflowing"]) == (
        64, 1144, {"sm120": 223, "sm90": 0}, {"sm120": 44, "sm90": 0})
    emitted = result["emitted"]
    assert (len(emitted["files"]), emitted["changed_count"], emitted["unfittable"], result["emitted_all_fit"]) == (
        10, 16, [], True)
    for name in emitted["files"]:
        written = json.loads((tmp_path / "out" / name).read_text())
        source = json.loads(sglang_wheel_member(sglang_wheel, name.replace(
            "sm120-configs/", "sglang/srt/layers/moe/fused_moe_triton/configs/").replace(
            "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", "NVIDIA_H200")))
        assert list(written) == list(source)  # the same batch sizes, in sglang's own format
        dtype = "fp8_w8a8" if "dtype=fp8_w8a8" in name else None
        assert all(predicted_shared_bytes(c, dtype, "sm120") <= 101376 for c in written.values())


def sglang_wheel_member(wheel: Path, member: str) -> bytes:
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        return zf.read(member)


def test_the_committed_prediction_is_what_the_formula_gives_today(sglang_wheel, tmp_path):
    code, fresh = run_workload(json.loads((EVIDENCE / "steps" / "predict" / "params.json").read_text())
                               | {"wheel": str(sglang_wheel)}, tmp_path / "out")
    recorded = json.loads((EVIDENCE / "steps" / "predict" / "result.json").read_text())
    assert code == 0
    for key in ("defaults", "defaults_overflowing", "tuned", "emitted"):
        assert fresh[key] == recorded[key], key


@pytest.mark.skipif(HAS_TRITON, reason="triton is installed here: the missing-Triton path cannot be shown")
def test_compiling_without_triton_is_exit_6_naming_the_way_out(sglang_wheel, tmp_path):
    code, result = run_workload({"wheel": str(sglang_wheel), "compile": True}, tmp_path / "out")
    assert code == 6 and result["status"] == "missing_dependency"
    assert result["error"] == ("triton is not installed for this Python; install the Triton the host serves with,"
                               " or set `compile: false` for the formula alone")


def test_bad_parameters_are_exit_2_in_one_line(sglang_wheel, tmp_path):
    code, result = run_workload({"wheel": str(sglang_wheel), "compile": False, "config_dirs": ["triton_9_9_9"]},
                                tmp_path / "out")
    assert code == 2
    assert result["error"] == ("config_dirs ['triton_9_9_9'] are not in the wheel; it has triton_3_1_0, triton_3_2_0,"
                               " triton_3_3_0, triton_3_3_1, triton_3_4_0, triton_3_5_1")
    code, result = run_workload({"wheel": str(sglang_wheel), "archs": ["sm999"]}, tmp_path / "out2")
    assert code == 2 and result["error"].startswith("arch 'sm999': use one of sm80, sm86")
