"""The pipeliner's formula: (num_stages - 1) stage buffers with mma.sync, num_stages with wgmma (a dot of M >= 64)."""

from __future__ import annotations

from reprokit.workloads.triton_moe_configs.predict import predicted_shared_bytes

FP8_DEFAULT = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128, "num_warps": 8, "num_stages": 4}


def test_the_upstream_figure_on_sm120_and_its_hopper_counterpart():
    assert predicted_shared_bytes(FP8_DEFAULT, "fp8_w8a8", "sm120") == 147456  # sglang #28019: Required: 147456
    assert predicted_shared_bytes(FP8_DEFAULT, "fp8_w8a8", "sm90") == 196608
    assert predicted_shared_bytes({**FP8_DEFAULT, "num_stages": 3}, "fp8_w8a8", "sm120") == 98304


def test_element_sizes_per_dtype_and_the_triton_default_of_three_stages():
    bf16_small = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64}  # no num_stages: Triton's 3
    assert predicted_shared_bytes(bf16_small, None, "sm120") == 2 * (16 * 64 * 2 + 64 * 32 * 2)
    assert predicted_shared_bytes(bf16_small, "int8_w8a16", "sm120") == 2 * (16 * 64 * 2 + 64 * 32 * 1)
    assert predicted_shared_bytes(bf16_small, "int4_w4a16", "sm120") is None  # another kernel (gptq_awq)


def test_hopper_takes_wgmma_only_for_a_dot_of_64_rows_or_more():
    narrow = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "num_stages": 3}
    assert predicted_shared_bytes(narrow, None, "sm90") == 2 * (16 * 128 * 2 + 128 * 128 * 2)  # mma.sync
    assert predicted_shared_bytes(narrow, "fp8_w8a8", "sm90", swap_ab=True) == 3 * (16 * 128 + 128 * 128)  # M is N
    assert predicted_shared_bytes({**narrow, "num_stages": 1}, None, "sm120") == 16 * 128 * 2 + 128 * 128 * 2
