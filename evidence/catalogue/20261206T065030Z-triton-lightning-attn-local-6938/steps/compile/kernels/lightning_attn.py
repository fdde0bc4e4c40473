"""The @triton.jit functions of vllm-0.27.0-py3-none-any.whl:vllm/model_executor/layers/lightning_attn.py, extracted verbatim by reprokit."""

import triton.language as tl
import triton

@triton.jit
def _fwd_diag_kernel(Q, K, V, Out, S, b: tl.constexpr, h: tl.constexpr, n, d: tl.constexpr, e: tl.constexpr, BLOCK: tl.constexpr, NUM_BLOCK, CBLOCK: tl.constexpr):
    off = tl.program_id(0)
    off_bh = off // NUM_BLOCK
    off_block = off % NUM_BLOCK
    off_cblock = tl.program_id(1)
    off_h = off_bh % h
    qk_offset = off_bh * n * d
    v_offset = off_bh * n * e
    o_offset = off_bh * n * e
    block_offset = off_block * BLOCK
    qk_block_offset = block_offset * d
    v_block_offset = block_offset * e
    o_block_offset = block_offset * e
    cblock_offset = off_cblock * CBLOCK
    q_cblock_offset = cblock_offset * d
    o_cblock_offset = cblock_offset * e
    Q_block_ptr = Q + qk_offset + qk_block_offset + q_cblock_offset + tl.arange(0, CBLOCK)[:, None] * d + tl.arange(0, d)[None, :]
    K_trans_block_ptr = K + qk_offset + qk_block_offset + tl.arange(0, CBLOCK)[None, :] * d + tl.arange(0, d)[:, None]
    V_block_ptr = V + v_offset + v_block_offset + tl.arange(0, CBLOCK)[:, None] * e + tl.arange(0, e)[None, :]
    O_block_ptr = Out + o_offset + o_block_offset + o_cblock_offset + tl.arange(0, CBLOCK)[:, None] * e + tl.arange(0, e)[None, :]
    S_block_ptr = S + off_h
    s = tl.load(S_block_ptr)
    i = off_cblock
    q_index = tl.arange(0, CBLOCK) + i * CBLOCK
    q = tl.load(Q_block_ptr, mask=block_offset + q_index[:, None] < n, other=0.0).to(tl.float32)
    qkv = tl.zeros([CBLOCK, e], dtype=tl.float32)
    for j in range(i + 1):
        kv_index = tl.arange(0, CBLOCK) + j * CBLOCK
        diff = q_index[:, None] - kv_index[None, :]
        s_index = s * diff
        s_index = tl.where(diff >= 0, -s_index, float('-inf'))
        decay = tl.exp(s_index)
        k_trans = tl.load(K_trans_block_ptr, mask=block_offset + kv_index[None, :] < n, other=0.0).to(tl.float32)
        v = tl.load(V_block_ptr, mask=block_offset + kv_index[:, None] < n, other=0.0).to(tl.float32)
        qk = tl.dot(q, k_trans) * decay
        qkv += tl.dot(qk, v)
        K_trans_block_ptr += CBLOCK * d
        V_block_ptr += CBLOCK * e
    tl.store(O_block_ptr, qkv.to(O_block_ptr.dtype.element_ty), mask=block_offset + q_index[:, None] < n)

@triton.jit
def _fwd_kv_parallel(K, V, K_decay, KV, b: tl.constexpr, h: tl.constexpr, n, d: tl.constexpr, e: tl.constexpr, BLOCK: tl.constexpr, NUM_BLOCK, D_FBLOCK: tl.constexpr, E_FBLOCK: tl.constexpr, NUM_FBLOCK: tl.constexpr, CBLOCK: tl.constexpr, NUM_CBLOCK: tl.constexpr):
    off_bh = tl.program_id(0)
    off_block = tl.program_id(1)
    off_h = off_bh % h
    block_offset = off_block * BLOCK
    k_block_offset = block_offset * d
    v_block_offset = block_offset * e
    kv_block_offset = off_block * d * e
    k_offset = off_bh * n * d
    v_offset = off_bh * n * e
    kv_offset = off_bh * NUM_BLOCK * d * e
    K_trans_block_ptr = K + k_offset + k_block_offset + tl.arange(0, CBLOCK)[None, :] * d + tl.arange(0, D_FBLOCK)[:, None]
    V_block_ptr = V + v_offset + v_block_offset + tl.arange(0, CBLOCK)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    KV_block_ptr = KV + kv_offset + kv_block_offset + tl.arange(0, D_FBLOCK)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    k_decay_ptr = K_decay + off_h * BLOCK + tl.arange(0, CBLOCK)
    kv_index = tl.arange(0, CBLOCK)
    kv = tl.zeros([D_FBLOCK, E_FBLOCK], dtype=tl.float32)
    split_n = n - (NUM_BLOCK - 1) * BLOCK if off_block == NUM_BLOCK - 1 else BLOCK
    left_shift = tl.cdiv(split_n, CBLOCK) * CBLOCK - split_n
    num_blocks = min(tl.cdiv(split_n, CBLOCK), NUM_CBLOCK)
    k_decay_ptr += (NUM_CBLOCK - num_blocks) * CBLOCK
    for j in range(num_blocks):
        left_bound = (1 - j) * left_shift
        k_trans = tl.load(K_trans_block_ptr - left_shift * d, mask=kv_index[None, :] >= left_bound, other=0.0)
        v = tl.load(V_block_ptr - left_shift * e, mask=kv_index[:, None] >= left_bound, other=0.0)
        k_decay = tl.load(k_decay_ptr)
        k_decay = k_decay[None, :]
        kv += tl.dot(k_trans * k_decay, v)
        K_trans_block_ptr += CBLOCK * d
        V_block_ptr += CBLOCK * e
        k_decay_ptr += CBLOCK
    tl.store(KV_block_ptr, kv.to(KV_block_ptr.dtype.element_ty))

@triton.jit
def _fwd_kv_reduce(S, KV, KV_HISTORY, b: tl.constexpr, h: tl.constexpr, n, d: tl.constexpr, e: tl.constexpr, BLOCK: tl.constexpr, NUM_BLOCK, D_FBLOCK: tl.constexpr, E_FBLOCK: tl.constexpr):
    off_bh = tl.program_id(0)
    off_h = off_bh % h
    kv_offset = off_bh * NUM_BLOCK * d * e
    KV_block_ptr = KV + kv_offset + tl.arange(0, D_FBLOCK)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    s_ptrs = S + off_h
    s = tl.load(s_ptrs)
    kv_history_offset = off_bh * d * e
    KV_HISTORY_block_ptr = KV_HISTORY + kv_history_offset + tl.arange(0, D_FBLOCK)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    kv_pre = tl.load(KV_HISTORY_block_ptr).to(tl.float32)
    for i in range(NUM_BLOCK):
        block_size = min(n - i * BLOCK, BLOCK)
        block_decay = tl.exp(-s.to(tl.float32) * block_size)
        kv_cur = tl.load(KV_block_ptr).to(tl.float32)
        tl.store(KV_block_ptr, kv_pre.to(KV_block_ptr.dtype.element_ty))
        kv_pre = block_decay * kv_pre + kv_cur
        KV_block_ptr += d * e
    tl.store(KV_HISTORY_block_ptr, kv_pre)

@triton.jit
def _fwd_none_diag_kernel(Q, Out, S, KV, b: tl.constexpr, h: tl.constexpr, n, d: tl.constexpr, e: tl.constexpr, BLOCK: tl.constexpr, NUM_BLOCK, E_FBLOCK: tl.constexpr, CBLOCK: tl.constexpr, NUM_CBLOCK: tl.constexpr):
    off_bh = tl.program_id(0)
    off_h = off_bh % h
    off_nc = tl.program_id(1)
    off_n = off_nc // NUM_CBLOCK
    off_c = off_nc % NUM_CBLOCK
    off_e = tl.program_id(2)
    n_offset = off_n * BLOCK
    c_offset = off_c * CBLOCK
    e_offset = off_e * E_FBLOCK
    block_offset = n_offset + c_offset
    q_offset = off_bh * n * d + (n_offset + c_offset) * d
    o_offset = off_bh * n * e + (n_offset + c_offset) * e + e_offset
    kv_offset = off_bh * NUM_BLOCK * d * e + off_n * d * e + e_offset
    Q_block_ptr = Q + q_offset + tl.arange(0, CBLOCK)[:, None] * d + tl.arange(0, d)[None, :]
    O_block_ptr = Out + o_offset + tl.arange(0, CBLOCK)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    KV_block_ptr = KV + kv_offset + tl.arange(0, d)[:, None] * e + tl.arange(0, E_FBLOCK)[None, :]
    S_block_ptr = S + off_h
    s = tl.load(S_block_ptr)
    c_array = tl.arange(0, CBLOCK)
    kv = tl.load(KV_block_ptr).to(tl.float32)
    q_index = block_offset + tl.arange(0, CBLOCK)
    q = tl.load(Q_block_ptr, mask=q_index[:, None] < n, other=0.0).to(tl.float32)
    q_decay = tl.exp(-s.to(tl.float32) * (off_c * CBLOCK + c_array[:, None]))
    qkv_none_diag = tl.dot(q, kv) * q_decay
    qkv_diag = tl.load(O_block_ptr, mask=q_index[:, None] < n, other=0.0).to(tl.float32)
    qkv = qkv_diag + qkv_none_diag
    tl.store(O_block_ptr, qkv.to(O_block_ptr.dtype.element_ty), mask=q_index[:, None] < n)

@triton.jit
def _linear_attn_decode_kernel(q_ptr, k_ptr, v_ptr, kv_cache_ptr, slope_rate, slot_idx, output_ptr, D: tl.constexpr, qkv_b_stride, qkv_h_stride, cache_b_stride, cache_h_stride, cache_d0_stride, cache_d1_stride, pad_slot_id: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """
    Kernel for linear attention decoding with KV cache.

    This kernel computes attention for a single token using the KV cache.
    """
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    pid_d = tl.program_id(2)
    slot_id = tl.load(slot_idx + pid_b).to(tl.int64)
    if slot_id == pad_slot_id:
        return
    batch_id = pid_b
    head_id = pid_h
    ratio = tl.load(slope_rate + pid_h)
    qk_d_offsets = tl.arange(0, D)
    v_d_offsets = tl.arange(0, BLOCK_SIZE) + pid_d * BLOCK_SIZE
    cache_d_offsets = qk_d_offsets[:, None] * cache_d0_stride + v_d_offsets[None, :] * cache_d1_stride
    q_offset = batch_id * qkv_b_stride + head_id * qkv_h_stride
    k_offset = batch_id * qkv_b_stride + head_id * qkv_h_stride
    v_offset = batch_id * qkv_b_stride + head_id * qkv_h_stride
    cache_offset = slot_id * cache_b_stride + head_id * cache_h_stride
    qk_mask = qk_d_offsets < D
    v_mask = v_d_offsets < D
    q = tl.load(q_ptr + q_offset + qk_d_offsets, mask=qk_mask, other=0.0)
    k = tl.load(k_ptr + k_offset + qk_d_offsets, mask=qk_mask, other=0.0)
    v = tl.load(v_ptr + v_offset + v_d_offsets, mask=v_mask, other=0.0)
    kv_outer = k[:, None] * v[None, :]
    kv_mask = qk_mask[:, None] & v_mask[None, :]
    ratio = tl.exp(-ratio)
    kv_ptr = kv_cache_ptr + cache_offset + cache_d_offsets
    kv_cache_old = tl.load(kv_ptr, mask=kv_mask, other=0.0)
    kv_outer = kv_outer + ratio * kv_cache_old
    output = q[:, None].to(tl.float32) * kv_outer
    output = tl.sum(output, axis=0)
    tl.store(kv_ptr, kv_outer, mask=kv_mask)
    tl.store(output_ptr + q_offset + v_d_offsets, output, mask=v_mask)
