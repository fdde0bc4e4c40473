"""The shared memory a fused-MoE configuration asks for, from its numbers alone, and the launch it compiles as.

Triton's software pipeliner keeps the A tile (BLOCK_M x BLOCK_K) and the B tile (BLOCK_K x BLOCK_N) of
each K step in shared memory. With ``mma.sync`` (SM80/SM89/SM120/SM121) it allocates ``num_stages - 1``
buffers of each (at least one: the dot reads its operands from shared memory); with Hopper's ``wgmma``
(SM90), which reads its operands from shared memory asynchronously, ``num_stages``. Triton takes ``wgmma``
only for a dot of M >= 64 rows (a warpgroup's tile): M is BLOCK_M, or BLOCK_N where the launch swaps A
and B. So fp8 128x256x128 with 4 stages is 3 * (128*128 + 128*256) = 147456 B on SM120 (sglang #28019)
and 196608 B on SM90. The compile (``triton_smem``) is the measurement; the result says where this
formula is exact.
"""

from __future__ import annotations

from typing import Any

from reprokit.workloads.triton_moe_configs.configs import TRITON_DEFAULT_OPTIONS

# Bytes per element of A and of B as the kernel loads them, per sglang dtype string (None: bf16/fp16).
ELEMENT_BYTES = {None: (2, 2), "fp8_w8a8": (1, 1), "int8_w8a8": (1, 1), "int8_w8a16": (2, 1)}
WGMMA_ARCHES = ("sm90",)
WGMMA_MIN_M = 64
# sglang's launcher arguments per dtype: the element types and which quantisation flags it sets.
KERNEL_TYPES = {
    None: {"a": "bf16", "b": "bf16", "flags": {}},
    "fp8_w8a8": {"a": "fp8e4nv", "b": "fp8e4nv", "flags": {"use_fp8_w8a8": True}},
    "int8_w8a8": {"a": "int8", "b": "int8", "flags": {"use_int8_w8a8": True}},
    "int8_w8a16": {"a": "bf16", "b": "int8", "flags": {"use_int8_w8a16": True}},
}


def options(config: dict[str, int]) -> dict[str, int]:
    return {key: int(config.get(key, default)) for key, default in TRITON_DEFAULT_OPTIONS.items()}


def predicted_shared_bytes(config: dict[str, int], dtype: str | None, arch: str, swap_ab: bool = False) -> int | None:
    """The pipeline buffers' bytes on ``arch``; None for a dtype whose tiles this model does not size."""
    if dtype not in ELEMENT_BYTES:
        return None
    a_bytes, b_bytes = ELEMENT_BYTES[dtype]
    m, n, k = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"], config["BLOCK_SIZE_K"]
    stages = options(config)["num_stages"]
    wgmma = arch in WGMMA_ARCHES and (n if swap_ab else m) >= WGMMA_MIN_M
    buffers = stages if wgmma else max(stages - 1, 1)
    return buffers * (m * k * a_bytes + k * n * b_bytes)


def kernel_args(config: dict[str, int], dtype: str | None, block_shape: list[int] | None, per_channel_quant: bool,
                swap_ab: bool, n_out: int, hidden: int, top_k: int) -> dict[str, Any]:
    """``fused_moe_kernel``'s arguments as ``invoke_fused_moe_kernel`` passes them for a gate-up GEMM of
    [tokens, hidden] x [E, n_out, hidden]: the strides of contiguous tensors, scales by quantisation."""
    types = KERNEL_TYPES[dtype]
    bn, bk = block_shape or (0, 0)
    blockwise = bool(block_shape)
    if blockwise:  # A_scale [M, K/bk], B_scale [E, N/bn, K/bk]
        a_scale_strides, b_scale_strides = (hidden // bk, 1), ((n_out // bn) * (hidden // bk), 1, hidden // bk)
    elif per_channel_quant:  # A_scale [M, 1], B_scale [E, N, 1]
        a_scale_strides, b_scale_strides = (1, 1), (n_out, 1, 1)
    elif dtype == "int8_w8a16":  # B_scale [E, N]
        a_scale_strides, b_scale_strides = (0, 0), (n_out, 0, 1)
    else:  # tensor-wise: one scale per expert
        a_scale_strides, b_scale_strides = (0, 0), (0, 0, 0)
    tokens = 512
    return {
        "a_ptr": {"ptr": types["a"]}, "a_desc": None, "b_ptr": {"ptr": types["b"]}, "b_desc": None, "bias_ptr": None,
        "c_ptr": {"ptr": "bf16"}, "a_scale_ptr": {"ptr": "fp32"}, "b_scale_ptr": {"ptr": "fp32"},
        "topk_weights_ptr": {"ptr": "fp32"}, "sorted_token_ids_ptr": {"ptr": "int32"},
        "expert_ids_ptr": {"ptr": "int32"}, "num_tokens_post_padded_ptr": {"ptr": "int32"},
        "N": n_out, "K": hidden, "EM": tokens * top_k + 255, "num_valid_tokens": tokens * top_k,
        "stride_am": hidden, "stride_ak": 1, "stride_be": n_out * hidden, "stride_bk": 1, "stride_bn": hidden,
        "stride_bias_e": 0, "stride_bias_n": 0, "stride_cm": n_out, "stride_cn": 1,
        "stride_asm": a_scale_strides[0], "stride_ask": a_scale_strides[1],
        "stride_bse": b_scale_strides[0], "stride_bsk": b_scale_strides[1], "stride_bsn": b_scale_strides[2],
        "group_n": bn, "group_k": bk,
        "BLOCK_SIZE_M": config["BLOCK_SIZE_M"], "BLOCK_SIZE_N": config["BLOCK_SIZE_N"],
        "BLOCK_SIZE_K": config["BLOCK_SIZE_K"], "GROUP_SIZE_M": config.get("GROUP_SIZE_M", 1),
        "MUL_ROUTED_WEIGHT": False, "top_k": top_k, "compute_type": {"dtype": "bf16"},
        "use_fp8_w8a8": False, "use_int8_w8a8": False, "use_int8_w8a16": False, **types["flags"],
        "per_channel_quant": per_channel_quant, "even_Ks": hidden % config["BLOCK_SIZE_K"] == 0,
        "c_sorted": False, "filter_expert": True, "swap_ab": swap_ab,
    }
