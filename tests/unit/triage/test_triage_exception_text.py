"""What an exception's text says: CUTLASS status, tile, fusion, swap, op, Python exception, cause."""

from triage_logs import INIT_FAILURE, dispatch_frame, stage_frame

from reprokit.triage.exception_text import analyse
from reprokit.triage.formats import PATTERNS_BY_KIND

TILE_DISPATCH = PATTERNS_BY_KIND["moe_tile_dispatch_frame"].example


def test_init_failure_with_its_dispatch_frame():
    text = "\n".join([INIT_FAILURE, dispatch_frame((256, 128, 128), fusion=3, swap_ab=True), stage_frame(2)])
    facts = analyse(text)
    assert facts.launcher_error == "Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal"
    assert facts.status == "Error Internal"
    assert (facts.tile, facts.fusion, facts.swap_ab, facts.op) == (
        "256x128x128", "FINALIZE", True, "trtllm::fused_moe::gemm2")
    assert facts.instantiation_file == "cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu"
    assert (facts.instantiation_arch, facts.instantiation_cta_m) == ("sm120", 128)
    assert facts.cause == "trtllm_assertion"
    assert facts.summary == facts.launcher_error


def test_without_frames_only_the_instantiation_file_is_known():
    facts = analyse(INIT_FAILURE)
    assert (facts.tile, facts.fusion, facts.swap_ab, facts.op) == (None, None, None, None)
    assert facts.instantiation_cta_m == 128


def test_unsupported_tile_config_number_is_in_k_bytes_and_needs_the_activation_type():
    message = "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:512)"
    bare = analyse(message)
    assert (bare.tile_enum, bare.tile, bare.dispatch_error) == (
        "CtaShape128x128x256B", None, "Unsupported tile shape config 128128256 for MoE gemm")
    with_frame = analyse(message + "\n" + TILE_DISPATCH)  # T = __nv_fp4_e2m1: 4 bits, so 256 bytes of K = 512
    assert (with_frame.tile_enum, with_frame.tile, with_frame.fusion) == ("CtaShape128x128x256B", "128x128x512", "NONE")


def test_unsupported_tile_and_cluster_message_gives_the_tile_in_elements():
    facts = analyse("Unsupported tile (128, 256, 128) and cluster (2, 1, 1) shape combination for arch 120.")
    assert facts.tile == "128x256x128"
    assert facts.dispatch_error.startswith("Unsupported tile (128, 256, 128) and cluster (2, 1, 1)")


def test_other_launcher_statuses():
    assert analyse("Grouped GEMM kernel will fail for params. Error: Error Not Supported (x.cu:60)").status == (
        "Error Not Supported")
    assert analyse("Failed to run cutlass TMA WS grouped gemm. Error: Error Internal").launcher_error == (
        "Failed to run cutlass TMA WS grouped gemm. Error: Error Internal")
    assert analyse("Workspace is size 4194304 but only 2097152 were allocated (x.cu:60)").launcher_error == (
        "Workspace is size 4194304 but only 2097152 were allocated")


def test_python_traceback_final_exception_chain_and_fatal_cause_first():
    text = "\n".join([
        "Traceback (most recent call last):",
        "RuntimeError: NCCL error: remote process exited or there was a network error",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Exception: Capture cuda graph failed",
    ])
    facts = analyse(text)
    assert facts.final_exception == "Exception: Capture cuda graph failed"
    assert facts.chained == 2
    assert (facts.cause, facts.cause_severity) == ("cuda_illegal_memory_access", "fatal")


def test_triton_shared_memory_and_oom_causes():
    triton = analyse(PATTERNS_BY_KIND["triton_out_of_resources"].example)
    assert (triton.cause, triton.final_exception) == (
        "triton_out_of_resources", PATTERNS_BY_KIND["triton_out_of_resources"].example)
    assert analyse(PATTERNS_BY_KIND["torch_oom"].example).cause == "torch_oom"
    assert analyse("nothing to see").cause is None
