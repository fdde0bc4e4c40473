"""The @triton.jit functions of sglang-0.5.9-py3-none-any.whl:sglang/srt/layers/attention/triton_ops/extend_attention.py, extracted verbatim by reprokit."""

import triton
import triton.language as tl

@triton.jit
def tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1

@triton.jit
def _copy_unified_indices_kernel(prefix_kv_indptr, prefix_kv_indices, extend_start_loc, extend_seq_lens, extend_kv_indices, unified_kv_indptr, unified_kv_indices, bs):
    """
    Triton kernel to copy indices to unified buffer (parallel per sequence).
    Each thread block processes one sequence with vectorized loads/stores.
    """
    pid = tl.program_id(0)
    if pid >= bs:
        return
    prefix_start = tl.load(prefix_kv_indptr + pid)
    prefix_end = tl.load(prefix_kv_indptr + pid + 1)
    extend_start = tl.load(extend_start_loc + pid)
    extend_len = tl.load(extend_seq_lens + pid)
    prefix_len = prefix_end - prefix_start
    unified_start = tl.load(unified_kv_indptr + pid)
    BLOCK_SIZE: tl.constexpr = 128
    for block_start in range(0, prefix_len, BLOCK_SIZE):
        offs = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offs < prefix_len
        src_idx = prefix_start + offs
        dst_idx = unified_start + offs
        vals = tl.load(prefix_kv_indices + src_idx, mask=mask, other=0)
        tl.store(unified_kv_indices + dst_idx, vals, mask=mask)
    for block_start in range(0, extend_len, BLOCK_SIZE):
        offs = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offs < extend_len
        src_idx = extend_start + offs
        dst_idx = unified_start + prefix_len + offs
        vals = tl.load(extend_kv_indices + src_idx, mask=mask, other=0)
        tl.store(unified_kv_indices + dst_idx, vals, mask=mask)

@triton.jit
def _fwd_kernel(Q_Extend, K_Extend, V_Extend, O_Extend, K_Buffer, V_Buffer, qo_indptr, kv_indptr, kv_indices, mask_ptr, mask_indptr, sink_ptr, window_kv_offset_ptr, sm_scale, kv_group_num, stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh, stride_obs, stride_oh, stride_buf_kbs, stride_buf_kh, stride_buf_vbs, stride_buf_vh, SLIDING_WINDOW_SIZE: tl.constexpr, logit_cap: tl.constexpr, xai_temperature_len: tl.constexpr, Lq: tl.constexpr, Lv: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, USE_CUSTOM_MASK: tl.constexpr, IS_CAUSAL: tl.constexpr, SKIP_PREFIX_CUSTOM_MASK: tl.constexpr, STORE_TRANSPOSE: tl.constexpr, HAS_SINK: tl.constexpr):
    cur_seq = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_block_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num
    cur_seq_extend_start_idx = tl.load(qo_indptr + cur_seq)
    cur_seq_len_extend = tl.load(qo_indptr + cur_seq + 1) - cur_seq_extend_start_idx
    cur_seq_kv_start_idx = tl.load(kv_indptr + cur_seq)
    cur_seq_len_prefix = tl.load(kv_indptr + cur_seq + 1) - cur_seq_kv_start_idx
    cur_seq_len = cur_seq_len_prefix + cur_seq_len_extend
    if USE_CUSTOM_MASK:
        cur_seq_mask_start_idx = tl.load(mask_indptr + cur_seq)
    window_kv_offset = 0
    if USE_CUSTOM_MASK and SLIDING_WINDOW_SIZE > 0:
        window_kv_offset = tl.load(window_kv_offset_ptr + cur_seq)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    offs_m = tl.arange(0, BLOCK_M)
    mask_m = cur_block_m * BLOCK_M + offs_m < cur_seq_len_extend
    mask_d = offs_d < Lq
    mask_dv = offs_dv < Lv
    if xai_temperature_len > 0:
        offs_qidx = cur_seq_len_prefix + cur_block_m * BLOCK_M + offs_m
        xai_temperature_scale = 1.0 / tl.log2(float(xai_temperature_len))
        xai_temperature_reg = tl.where(offs_qidx > xai_temperature_len, tl.log2(offs_qidx.to(tl.float32)) * xai_temperature_scale, 1.0)
    offs_q = (cur_seq_extend_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :]
    q = tl.load(Q_Extend + offs_q, mask=mask_m[:, None] & mask_d[None, :], other=0.0)
    if BLOCK_DPE > 0:
        offs_dpe = BLOCK_DMODEL + tl.arange(0, BLOCK_DPE)
        offs_qpe = (cur_seq_extend_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_dpe[None, :]
        qpe = tl.load(Q_Extend + offs_qpe, mask=mask_m[:, None], other=0.0)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
    deno = tl.zeros([BLOCK_M], dtype=tl.float32)
    e_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float('inf')
    for start_n in range(0, cur_seq_len_prefix, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        mask_n = start_n + offs_n < cur_seq_len_prefix
        final_mask = mask_m[:, None] & mask_n[None, :]
        if USE_CUSTOM_MASK and (not SKIP_PREFIX_CUSTOM_MASK):
            custom_mask = tl.load(mask_ptr + cur_seq_mask_start_idx + (cur_block_m * BLOCK_M + offs_m[:, None]) * (cur_seq_len + window_kv_offset) + window_kv_offset + start_n + offs_n[None, :], mask=mask_m[:, None] & mask_n[None, :], other=0)
            final_mask &= custom_mask
        if SLIDING_WINDOW_SIZE > 0:
            window_mask = cur_seq_len_prefix + cur_block_m * BLOCK_M + offs_m[:, None] <= start_n + offs_n[None, :] + SLIDING_WINDOW_SIZE
            final_mask &= window_mask
        SKIP_TILE = False
        if USE_CUSTOM_MASK and (not SKIP_PREFIX_CUSTOM_MASK) or SLIDING_WINDOW_SIZE > 0:
            SKIP_TILE = tl.max(tl.max(final_mask.to(tl.int32), axis=1), axis=0) == 0
        if not SKIP_TILE:
            offs_kv_loc = tl.load(kv_indices + cur_seq_kv_start_idx + start_n + offs_n, mask=mask_n, other=0)
            offs_buf_k = offs_kv_loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_d[:, None]
            k = tl.load(K_Buffer + offs_buf_k, mask=mask_n[None, :] & mask_d[:, None], other=0.0)
            qk = tl.dot(q.to(k.dtype), k)
            if BLOCK_DPE > 0:
                offs_kpe = offs_kv_loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_dpe[:, None]
                kpe = tl.load(K_Buffer + offs_kpe, mask=mask_n[None, :], other=0.0)
                qk += tl.dot(qpe.to(kpe.dtype), kpe)
            qk *= sm_scale
            if logit_cap > 0:
                qk = logit_cap * tanh(qk / logit_cap)
            if xai_temperature_len > 0:
                qk *= xai_temperature_reg[:, None]
            qk = tl.where(final_mask, qk, float('-inf'))
            row_max = tl.max(qk, 1)
            row_max_fixed = tl.where(row_max == float('-inf'), -1e+20, row_max)
            n_e_max = tl.maximum(row_max_fixed, e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            deno = deno * re_scale + tl.sum(p, 1)
            offs_buf_v = offs_kv_loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh + offs_dv[None, :]
            v = tl.load(V_Buffer + offs_buf_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
            p = p.to(v.dtype)
            acc = acc * re_scale[:, None] + tl.dot(p, v)
            e_max = n_e_max
    cur_block_m_end = cur_seq_len_extend if not IS_CAUSAL else tl.minimum(cur_seq_len_extend, (cur_block_m + 1) * BLOCK_M)
    for start_n in range(0, cur_block_m_end, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        mask_n = start_n + offs_n < cur_block_m_end
        final_mask = mask_m[:, None] & mask_n[None, :]
        if USE_CUSTOM_MASK:
            custom_mask = tl.load(mask_ptr + cur_seq_mask_start_idx + (cur_block_m * BLOCK_M + offs_m[:, None]) * (cur_seq_len + window_kv_offset) + window_kv_offset + cur_seq_len_prefix + start_n + offs_n[None, :], mask=mask_m[:, None] & mask_n[None, :], other=0)
            custom_mask &= mask_m[:, None] & mask_n[None, :]
            final_mask &= custom_mask
        elif IS_CAUSAL:
            mask_causual = cur_block_m * BLOCK_M + offs_m[:, None] >= start_n + offs_n[None, :]
            mask_causual &= mask_m[:, None] & mask_n[None, :]
            final_mask &= mask_causual
        else:
            mask_non_causal = mask_m[:, None] & mask_n[None, :]
            final_mask &= mask_non_causal
        if SLIDING_WINDOW_SIZE > 0:
            window_mask = cur_block_m * BLOCK_M + offs_m[:, None] <= start_n + offs_n[None, :] + SLIDING_WINDOW_SIZE
            final_mask &= window_mask
        SKIP_TILE = False
        if USE_CUSTOM_MASK or SLIDING_WINDOW_SIZE > 0:
            SKIP_TILE = tl.max(tl.max(final_mask.to(tl.int32), axis=1), axis=0) == 0
        if not SKIP_TILE:
            offs_k = (cur_seq_extend_start_idx + start_n + offs_n[None, :]) * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None]
            k = tl.load(K_Extend + offs_k, mask=mask_n[None, :] & mask_d[:, None], other=0.0)
            qk = tl.dot(q, k, out_dtype=tl.float32)
            if BLOCK_DPE > 0:
                offs_kpe = (cur_seq_extend_start_idx + start_n + offs_n[None, :]) * stride_kbs + cur_kv_head * stride_kh + offs_dpe[:, None]
                kpe = tl.load(K_Extend + offs_kpe, mask=mask_n[None, :], other=0.0)
                qk += tl.dot(qpe, kpe)
            qk *= sm_scale
            if logit_cap > 0:
                qk = logit_cap * tanh(qk / logit_cap)
            if xai_temperature_len > 0:
                qk *= xai_temperature_reg[:, None]
            qk = tl.where(final_mask, qk, float('-inf'))
            row_max = tl.max(qk, 1)
            row_max_fixed = tl.where(row_max == float('-inf'), -1e+20, row_max)
            n_e_max = tl.maximum(row_max_fixed, e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            deno = deno * re_scale + tl.sum(p, 1)
            offs_v = (cur_seq_extend_start_idx + start_n + offs_n[:, None]) * stride_vbs + cur_kv_head * stride_vh + offs_dv[None, :]
            v = tl.load(V_Extend + offs_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
            p = p.to(v.dtype)
            acc = acc * re_scale[:, None] + tl.dot(p, v)
            e_max = n_e_max
    if HAS_SINK:
        cur_sink = tl.load(sink_ptr + cur_head)
        deno += tl.exp(cur_sink - e_max)
    offs_o = (cur_seq_extend_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_dv[None, :]
    if STORE_TRANSPOSE:
        tl.store(O_Extend + offs_o.T, (acc / deno[:, None]).T, mask=(mask_m[:, None] & mask_dv[None, :]).T)
    else:
        tl.store(O_Extend + offs_o, acc / deno[:, None], mask=mask_m[:, None] & mask_dv[None, :])

@triton.jit
def _fwd_kernel_unified(Q, O, K_Buffer, V_Buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, mask_ptr, mask_indptr, sink_ptr, window_start_pos, sm_scale, kv_group_num, stride_qbs, stride_qh, stride_obs, stride_oh, stride_buf_kbs, stride_buf_kh, stride_buf_vbs, stride_buf_vh, SLIDING_WINDOW_SIZE: tl.constexpr, logit_cap: tl.constexpr, xai_temperature_len: tl.constexpr, Lq: tl.constexpr, Lv: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr, USE_CUSTOM_MASK: tl.constexpr, HAS_SINK: tl.constexpr):
    """
    Unified 1-stage kernel for deterministic extend attention.
    Both prefix and extend KV are accessed through the unified kv_indices.
    """
    cur_seq = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_block_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num
    cur_seq_q_start_idx = tl.load(qo_indptr + cur_seq)
    cur_seq_q_len = tl.load(qo_indptr + cur_seq + 1) - cur_seq_q_start_idx
    cur_seq_kv_start_idx = tl.load(kv_indptr + cur_seq)
    cur_seq_kv_len = tl.load(kv_indptr + cur_seq + 1) - cur_seq_kv_start_idx
    cur_seq_prefix_len = tl.load(prefix_lens + cur_seq)
    cur_window_start = 0
    if SLIDING_WINDOW_SIZE > 0:
        cur_window_start = tl.load(window_start_pos + cur_seq)
    if USE_CUSTOM_MASK:
        cur_seq_mask_start_idx = tl.load(mask_indptr + cur_seq)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    offs_m = tl.arange(0, BLOCK_M)
    mask_m = cur_block_m * BLOCK_M + offs_m < cur_seq_q_len
    mask_d = offs_d < Lq
    mask_dv = offs_dv < Lv
    if xai_temperature_len > 0:
        offs_qidx = cur_seq_prefix_len + cur_block_m * BLOCK_M + offs_m
        xai_temperature_reg = tl.where(offs_qidx < xai_temperature_len, 1.0, xai_temperature_len / (offs_qidx + 1.0))
    offs_q = (cur_seq_q_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :]
    q = tl.load(Q + offs_q, mask=mask_m[:, None] & mask_d[None, :], other=0.0)
    if BLOCK_DPE > 0:
        offs_dpe = BLOCK_DMODEL + tl.arange(0, BLOCK_DPE)
        offs_qpe = (cur_seq_q_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_dpe[None, :]
        qpe = tl.load(Q + offs_qpe, mask=mask_m[:, None], other=0.0)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
    deno = tl.zeros([BLOCK_M], dtype=tl.float32)
    e_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float('inf')
    for start_n in range(0, cur_seq_kv_len, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        mask_n = start_n + offs_n < cur_seq_kv_len
        final_mask = mask_m[:, None] & mask_n[None, :]
        if USE_CUSTOM_MASK:
            custom_mask = tl.load(mask_ptr + cur_seq_mask_start_idx + (cur_block_m * BLOCK_M + offs_m[:, None]) * cur_seq_kv_len + start_n + offs_n[None, :], mask=mask_m[:, None] & mask_n[None, :], other=0)
            final_mask &= custom_mask
        if IS_CAUSAL and (not USE_CUSTOM_MASK):
            q_idx = cur_block_m * BLOCK_M + offs_m[:, None]
            k_idx_in_total = start_n + offs_n[None, :]
            k_is_extend = k_idx_in_total >= cur_seq_prefix_len
            k_idx_in_extend = k_idx_in_total - cur_seq_prefix_len
            causal_mask = tl.where(k_is_extend, q_idx >= k_idx_in_extend, True)
            final_mask &= causal_mask
        if SLIDING_WINDOW_SIZE > 0:
            q_abs_pos = cur_window_start + cur_seq_prefix_len + cur_block_m * BLOCK_M + offs_m[:, None]
            k_abs_pos = cur_window_start + start_n + offs_n[None, :]
            window_mask = q_abs_pos <= k_abs_pos + SLIDING_WINDOW_SIZE
            final_mask &= window_mask
        SKIP_TILE = False
        if USE_CUSTOM_MASK or SLIDING_WINDOW_SIZE > 0:
            SKIP_TILE = tl.max(tl.max(final_mask.to(tl.int32), axis=1), axis=0) == 0
        if not SKIP_TILE:
            offs_kv_loc = tl.load(kv_indices + cur_seq_kv_start_idx + start_n + offs_n, mask=mask_n, other=0)
            offs_buf_k = offs_kv_loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_d[:, None]
            k = tl.load(K_Buffer + offs_buf_k, mask=mask_n[None, :] & mask_d[:, None], other=0.0)
            qk = tl.dot(q.to(k.dtype), k)
            if BLOCK_DPE > 0:
                offs_kpe = offs_kv_loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_dpe[:, None]
                kpe = tl.load(K_Buffer + offs_kpe, mask=mask_n[None, :], other=0.0)
                qk += tl.dot(qpe.to(kpe.dtype), kpe)
            qk *= sm_scale
            if logit_cap > 0:
                qk = logit_cap * tanh(qk / logit_cap)
            if xai_temperature_len > 0:
                qk *= xai_temperature_reg[:, None]
            qk = tl.where(final_mask, qk, float('-inf'))
            row_max = tl.max(qk, 1)
            row_max_fixed = tl.where(row_max == float('-inf'), -1e+20, row_max)
            n_e_max = tl.maximum(row_max_fixed, e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            deno = deno * re_scale + tl.sum(p, 1)
            offs_buf_v = offs_kv_loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh + offs_dv[None, :]
            v = tl.load(V_Buffer + offs_buf_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
            p = p.to(v.dtype)
            acc = acc * re_scale[:, None] + tl.dot(p, v)
            e_max = n_e_max
    if HAS_SINK:
        cur_sink = tl.load(sink_ptr + cur_head)
        deno += tl.exp(cur_sink - e_max)
    offs_o = (cur_seq_q_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_dv[None, :]
    tl.store(O + offs_o, acc / deno[:, None], mask=mask_m[:, None] & mask_dv[None, :])
