"""The device check's CPU-side parts: the reduced module's source choice, the CUPTI library, the readers of its
output and of the autotuner's log, the cross-check, and ``invoke fix --block`` / the per-release mechanisms.

What needs the GPU (the build, the launches, FlashInfer's autotuner) runs on the GPU host; its records are in
evidence/h200-fused-moe-sm90-reduced/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reprokit.commands.fix import parse_block
from reprokit.errors import ConfigError, HostError
from reprokit.fix.knobs import fix_plan
from reprokit.fix.mechanisms import mechanisms, summary_lines
from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem import device_check, reduced_module

REPO = Path(__file__).resolve().parents[3]
EVIDENCE = REPO / "evidence" / "h200-fused-moe-sm90-reduced"
CUDA = Path("/usr/local/cuda-13.0/targets/x86_64-linux")
GEMM1, GEMM2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"


def test_generated_files_are_kept_by_the_types_they_instantiate(tmp_path: Path) -> None:
    tma = tmp_path / "a.generated.cu"
    tma.write_text("INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm90, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16,\n"
                   "  EpilogueOpDefault, NONE, 128, 16, 64, 1, 1, 1, false, false, false, false);\n"
                   "INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm90, half, half, half, EpilogueOpDefault, ...);\n")
    sm80 = tmp_path / "b.generated.cu"
    sm80.write_text("template void sm80_generic_fused_moe_gemm_kernelLauncher<cutlass::bfloat16_t, "
                    "cutlass::bfloat16_t, 128, 128, 64, 2, X>(...);\n")
    mixed = tmp_path / "c.generated.cu"
    mixed.write_text("INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm90, __nv_bfloat16, cutlass::uint4b_t, x);\n")
    assert reduced_module.generated_file_dtypes(tma) == {("__nv_bfloat16", "__nv_bfloat16"), ("half", "half")}
    assert reduced_module.generated_file_dtypes(sm80) == {("cutlass::bfloat16_t", "cutlass::bfloat16_t")}
    assert reduced_module.generated_file_dtypes(mixed) == {("__nv_bfloat16", "cutlass::uint4b_t")}
    assert reduced_module.PER_DTYPE_HANDWRITTEN.match("moe_gemm_kernels_fp16_uint4.cu")
    assert not reduced_module.PER_DTYPE_HANDWRITTEN.match("moe_gemm_tma_warp_specialized_input.cu")
    assert not reduced_module.PER_DTYPE_HANDWRITTEN.match("cutlass_fused_moe_instantiation.cu")


def test_the_cupti_library_is_package_data_and_builds_against_cupti(tmp_path: Path) -> None:
    assert device_check.TRACE_SOURCE.is_file()
    if shutil.which("g++") is None or not (CUDA / "include" / "cupti.h").is_file():
        pytest.skip(f"no g++ or no CUPTI headers under {CUDA}")
    lib = tmp_path / "libsmem_trace.so"
    done = subprocess.run(["g++", "-shared", "-fPIC", "-O2", f"-I{CUDA / 'include'}", str(device_check.TRACE_SOURCE),
                           f"-L{CUDA / 'lib'}", "-lcupti", "-ldl", "-o", str(lib)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    assert " T InitializeInjection" in symbols
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True, text=True).stdout
    assert [line.split()[-1] for line in undefined.splitlines() if " cu" in line] == [
        "cuptiEnableCallback@libcupti.so.13", "cuptiSubscribe@libcupti.so.13"]  # driver calls go through dlsym


def test_the_autotuner_log_is_read_for_the_tactics_it_profiled() -> None:
    # the two f-strings of flashinfer 0.6.18's autotuner.py (2209 and 1818), as its logger formats them
    runner = "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7f3a>"
    log = "\n".join([
        f"2026-12-01 23:41:31,063 - DEBUG - autotuner.py:2209 - flashinfer.jit: [Autotuner]: profiling {runner} 0, "
        "shapes=[torch.Size([1, 1024])], avg_time 0.01",
        f"... [Autotuner]: profiling {runner} 47, shapes=[torch.Size([2, 1024])], avg_time 0.02",
        f"... [Autotuner]: profiling {runner} 47, shapes=[torch.Size([4, 1024])], avg_time 0.02",
        f"... [Autotuner]: Skipping tactic {runner} 40, due to failure while profiling: boom",
        "... [TacticsBlocklist]: Filtered 2 invalid tactic(s) for trtllm::fused_moe::gemm1::MoERunner (43 remaining)"])
    read = device_check.profiled_tactics(log)
    assert read["profiled"] == [0, 47] and read["profile_lines"] == 3
    assert read["failed_while_profiling"] == [40]
    assert len(read["blocklist_lines"]) == 1


def test_cross_check_sets_each_launch_beside_its_prediction() -> None:
    predicted = json.loads((EVIDENCE / "predicted-0.6.18-sm90-bf16.json").read_text())
    by_tactic = {r["tactic"]: r for r in predicted["rows"]}
    forced = {"rows": [
        {"gemm_idx": 1, "tactic": 2, "launched": True, "requested_smem_bytes": [by_tactic[2]["kernel_smem_bytes"]]},
        {"gemm_idx": 1, "tactic": 5, "launched": True, "requested_smem_bytes": [by_tactic[5]["kernel_smem_bytes"] + 128]},
        {"gemm_idx": 1, "tactic": 36, "launched": True, "requested_smem_bytes": [49152]},  # SM80-style: not modelled
        {"gemm_idx": 2, "tactic": 47, "launched": False, "requested_smem_bytes": [by_tactic[47]["kernel_smem_bytes"]]}]}
    checked = device_check.cross_check(predicted, forced)
    assert (checked["tactics"], checked["agree"]) == (4, 1)
    why = {d["tactic"]: d["difference"] for d in checked["differences"]}
    assert why == {5: "predicted 215040 B, requested [215168]", 36: "no prediction for this tactic",
                   47: "predicted fits, launched=False"}
    assert checked["rows"][0]["predicted_smem_bytes"] == checked["rows"][0]["requested_smem_bytes"] == 215040


def test_ninja_progress_counts_what_finished(tmp_path: Path) -> None:
    (tmp_path / "build.ninja").write_text("build a.cuda.o: cuda_compile a.cu\nbuild b.o: compile b.cpp\n"
                                          "build m.so: link a.cuda.o b.o\n")
    (tmp_path / ".ninja_log").write_text("# ninja log v7\n0\t2500\t1\t/x/a.cuda.o\tff\n")
    progress = device_check.ninja_progress(tmp_path)
    assert progress["objects"] == 2 and progress["objects_built"] == 1
    assert progress["object_s"] == {"a.cuda.o": 2.5}


def test_block_is_parsed_and_bad_parts_name_themselves() -> None:
    assert parse_block("gemm1:2,5;gemm2:47") == {"gemm1": [2, 5], "gemm2": [47]}
    assert parse_block("trtllm::fused_moe::gemm2:50;") == {"trtllm::fused_moe::gemm2": [50]}
    for bad in ("gemm1", "gemm1:x", ":3"):
        with pytest.raises(ConfigError, match="give OP:TACTIC"):
            parse_block(bad)


def _plan(*args, **kwargs) -> dict:
    try:
        return fix_plan(*args, **kwargs)
    except (HostError, WorkloadError) as exc:
        pytest.skip(f"the flashinfer wheel: {exc}")


def test_fix_blocks_chosen_tactics_where_none_fails(tmp_path: Path) -> None:
    plan = _plan("0.6.18", "sm120", "nvfp4", block={"gemm1": [1], "gemm2": [21]}, out_dir=tmp_path)
    assert plan["blocked"]["chosen"] == {GEMM1: [1], GEMM2: [21]}
    written = json.loads((tmp_path / "tactics-blocklist.json").read_text())
    assert written["invalid_tactics"] == {f"{GEMM1}::MoERunner": [1], f"{GEMM2}::MoERunner": [21]}
    assert written["_metadata"]["flashinfer_version"] == "0.6.18"
    knob = next(k for k in plan["knobs"] if k["name"] == "tactics-blocklist")
    assert knob["verified"]["loaded"] is True and "exactly the chosen ones" in knob["cost"]
    assert plan["autotuner"]["autotune_v2"]["present"] is False
    with pytest.raises(ConfigError, match=r"--block gemm1:999: flashinfer 0.6.18 \(sm120, nvfp4\) numbers"):
        _plan("0.6.18", "sm120", "nvfp4", block={"gemm1": [999]})


@pytest.mark.parametrize(("version", "blocklist", "skip_ops", "v2"), [
    ("0.6.3", False, False, None), ("0.6.18", True, True, None), ("0.7.4", True, True, True)])
def test_each_release_says_which_mechanism_its_autotuner_honours(fetch_wheel, version, blocklist, skip_ops, v2) -> None:
    try:
        wheel = fetch_wheel(version).path
    except WorkloadError as exc:
        pytest.skip(f"flashinfer {version}: {exc}")
    found = mechanisms(wheel)
    assert found["blocklist"]["honoured"] is blocklist
    assert found["skip_ops"]["honoured"] is skip_ops
    assert found["autotune_v2"].get("blocklist_honoured") is v2
    assert len(summary_lines(found)) == 3
    if v2:
        assert found["autotune_v2"]["evidence"].startswith("flashinfer/autotune_cache.py:702 autotune_v2 opens autotune(")


FAILING_0_6_3 = [  # the two SM120 kernels of 0.6.3 that cannot start (reprokit/data/fit-table.json)
    {"op": GEMM2, "tactic": 14, "tile": "128x256x128", "fusion": "FINALIZE", "kernel_smem_bytes": 102400},
    {"op": GEMM2, "tactic": 15, "tile": "256x128x128", "fusion": "FINALIZE", "kernel_smem_bytes": 102400}]


def test_pr_2927s_figure_lets_the_102400_byte_kernels_through(fetch_wheel) -> None:
    from reprokit.fix import upstream_guards

    try:
        wheel = fetch_wheel("0.6.3").path
    except WorkloadError as exc:
        pytest.skip(f"flashinfer 0.6.3: {exc}")
    lines = upstream_guards.section("0.6.3", wheel, FAILING_0_6_3, 101376)
    text = "\n".join(lines)
    assert "FlashInfer 0.6.3 has no such filter (no tile_fits_smem in" in text
    assert "get_candidate_configs_sm120 has no shared-memory filter" in text
    assert "it lets through 2 of the 2 failing tactics: gemm2 tactic 14 (128x256x128 FINALIZE, 102400 B), " \
           "gemm2 tactic 15 (256x128x128 FINALIZE, 102400 B)" in text
    over = [{**FAILING_0_6_3[0], "kernel_smem_bytes": 111616}]
    assert "it would reject all 1 failing tactics" in "\n".join(upstream_guards.section("0.6.3", wheel, over, 101376))


def test_a_release_with_the_filter_is_read_for_its_limit(tmp_path: Path) -> None:
    from reprokit.fix import upstream_guards

    wheel = tmp_path / "flashinfer_python-9.9.9-py3-none-any.whl"
    with __import__("zipfile").ZipFile(wheel, "w") as zf:
        zf.writestr(upstream_guards.HEURISTIC, "// x\nbool tile_fits_smem(int sm, int m, int n, int k, Config c, int stages = 2) {\n"
                                              "  int const limit = (sm == 86 || sm == 89 || sm >= 120) ? 102400 : 232448;\n"
                                              "  return smem_bytes(m, n, k, stages) <= limit;\n}\n")
    found = upstream_guards.release_filter(wheel)
    assert found == {"present": True, "evidence": f"{upstream_guards.HEURISTIC}:2 tile_fits_smem", "limits": [102400, 232448]}
    text = "\n".join(upstream_guards.section("9.9.9", wheel, FAILING_0_6_3, 101376))
    assert "limit constants 102400, 232448); set against this table with 102400 B" in text
    assert "it lets through 2 of the 2 failing tactics" in text
