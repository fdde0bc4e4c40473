"""Error classification against real exception texts, and the tile spellings that occur in them."""

from __future__ import annotations

import pytest

from reprokit.workloads.tile_sweep import classify

# A FlashInfer SM120 autotuner failure as sglang logs it (exception text, first lines).
SM120_ERROR_INTERNAL = (
    "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm."
    " Error: Error Internal (/workspace/flashinfer/data/csrc/nv_internal/tensorrt_llm/cutlass_instantiations/120/"
    "gemm_grouped/cutlass_kernel_file_gemm_grouped_sm120_M128_BS_group2.generated.cu:60)\n"
    "1       0x7f3c2d4a1b2c tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 76\n"
    "2       0x7f3c2d5f0e11 void tensorrt_llm::kernels::cutlass_kernels_oss::"
    "dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized<cutlass::arch::Sm120, __nv_fp4_e2m1, __nv_fp4_e2m1,"
    " __nv_bfloat16, (tensorrt_llm::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion)0,"
    " cute::tuple<cute::C<128>, cute::C<128>, cute::C<256> >, false>(...) + 913\n"
)


@pytest.mark.parametrize("pattern", classify.PATTERNS, ids=lambda p: p.name)
def test_every_pattern_matches_its_own_example(pattern):
    result = classify.classify(pattern.example)
    assert result["pattern"] == pattern.name
    assert result["class"] == pattern.error_class


@pytest.mark.parametrize("text, error_class, fields", [
    ("out of resource: shared memory, Required: 262144, Hardware limit: 232448",
     classify.OUT_OF_RESOURCES, {"resource": "shared memory", "required_bytes": "262144", "limit_bytes": "232448"}),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 110592, Hardware limit: 101376."
     " Reducing block sizes or `num_stages` may help.",
     classify.OUT_OF_RESOURCES, {"required_bytes": "110592", "limit_bytes": "101376"}),
    ("Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal", classify.ERROR_INTERNAL_INIT, {}),
    (SM120_ERROR_INTERNAL, classify.ERROR_INTERNAL_INIT, {}),
    ("Unsupported tile shape config 128256128 for MoE gemm.", classify.UNSUPPORTED_TILE, {"config": "128256128"}),
    ("[TensorRT-LLM][ERROR] Assertion failed: Failed to run cutlass TMA WS grouped gemm. Error: Error Internal",
     classify.CUTLASS_STATUS, {"status": "Error Internal"}),
    ("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously"
     " reported at some other API call", classify.CUDA_ERROR, {"what": "an illegal memory access was encountered"}),
    ("cuFuncSetAttribute failed: CUDA_ERROR_INVALID_VALUE (invalid argument)", classify.CUDA_ERROR,
     {"name": "CUDA_ERROR_INVALID_VALUE"}),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB.", classify.OUT_OF_MEMORY, {}),
    ("KeyError: 'gemm_idx'", classify.OTHER, {}),
])
def test_real_texts_are_classified(text, error_class, fields):
    result = classify.classify(text)
    assert result["class"] == error_class
    for key, value in fields.items():
        assert result["fields"][key] == value


def test_illegal_memory_access_is_sticky_and_error_internal_is_not():
    assert classify.classify("CUDA error: an illegal memory access was encountered")["sticky"] is True
    assert classify.classify(SM120_ERROR_INTERNAL)["sticky"] is False
    assert classify.classify("CUDA_ERROR_INVALID_VALUE")["sticky"] is False


def test_describe_exception_names_type_and_module():
    try:
        raise RuntimeError("Unsupported tile shape config 128128256 for MoE gemm.")
    except RuntimeError as exc:
        described = classify.describe_exception(exc)
    assert described["type"] == "RuntimeError"
    assert described["text"].startswith("builtins.RuntimeError: Unsupported tile shape")
    assert described["class"] == classify.UNSUPPORTED_TILE


def test_tile_from_error_reads_the_backtrace_frame_and_the_dispatch_code():
    # the frame's cute tile is in elements; the dispatch code is CutlassTileConfigSM120's value, K in bytes
    # (moe_gemm_template_dispatch_tma_ws.h:413 prints (int)gemm_config.tile_config_sm120): NVFP4 doubles K
    assert classify.tile_from_error(SM120_ERROR_INTERNAL, 4) == "128x128x256"
    assert classify.tile_from_error("Unsupported tile shape config 256128128 for MoE gemm.", 4) == "256x128x256"
    assert classify.tile_from_error("Unsupported tile shape config 128128256 for MoE gemm.", 4) == "128x128x512"
    assert classify.tile_from_error("Unsupported tile shape config 128128256 for MoE gemm.", 8) == "128x128x256"
    assert classify.tile_from_error("Error Internal", 4) is None
