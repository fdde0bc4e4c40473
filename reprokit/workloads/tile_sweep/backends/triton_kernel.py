"""The grouped (per-expert) GEMM the Triton backend sweeps, and its compilation for any target.

Imports triton at module level: import this module only where triton is
installed. ``compile_task`` is a top-level function so a process pool can run
it; it compiles for a named target (``GPUTarget("cuda", 120, 32)``) without
needing that GPU, or any GPU.

Layout (sglang's fused-MoE layout): A is [sum of tokens, K] with each expert's
rows contiguous (``expert_offsets`` holds the E+1 row offsets), B is
[E, N, K] with K contiguous, C is [sum of tokens, N]; bf16 in and out, fp32
accumulation.
"""

from __future__ import annotations

import time
from typing import Any

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

INT_ARGS = ("N", "K", "num_m_tiles", "stride_am", "stride_be", "stride_bn", "stride_cm")
NOT_SPECIALIZED = ("num_m_tiles",)  # varies with the tokens per expert; one compile covers them all


@triton.jit(do_not_specialize=list(NOT_SPECIALIZED))
def grouped_gemm_kernel(
    a_ptr, b_ptr, c_ptr, expert_offsets_ptr,
    N, K, num_m_tiles,
    stride_am, stride_be, stride_bn, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr,
):
    pid = tl.program_id(0)
    expert = tl.program_id(1)
    # Within an expert, walk GROUP_M row tiles per column tile so the weight tile is reused from L2.
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_size = min(num_m_tiles - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_size
    pid_n = (pid % per_group) // group_size

    row_start = tl.load(expert_offsets_ptr + expert)
    rows = tl.load(expert_offsets_ptr + expert + 1) - row_start
    if pid_m * BLOCK_M >= rows:
        return

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    row_ok = offs_m < rows
    a_ptrs = a_ptr + (row_start + offs_m).to(tl.int64)[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + expert.to(tl.int64) * stride_be + offs_n[None, :] * stride_bn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_ptrs)
        else:
            k_left = K - k0
            a = tl.load(a_ptrs, mask=row_ok[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + (row_start + offs_m).to(tl.int64)[:, None] * stride_cm + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & (offs_cn[None, :] < N))


@triton.jit
def empty_kernel(x_ptr):
    pass


def int_args(n: int, k: int, num_m_tiles: int) -> dict[str, int]:
    """The kernel's integer arguments for contiguous A [rows, K], B [E, N, K], C [rows, N]."""
    return {"N": n, "K": k, "num_m_tiles": num_m_tiles, "stride_am": k, "stride_be": n * k, "stride_bn": k, "stride_cm": n}


def specialization(ints: dict[str, int], block_k: int) -> tuple:
    """What Triton's JIT specializes on for these values (16-divisibility, ==1, 64-bit), plus EVEN_K:
    two problems with the same specialization share one compiled kernel."""
    spec = []
    for name in INT_ARGS:
        value = ints[name]
        if name in NOT_SPECIALIZED:
            spec.append((name, "i32"))
        elif value == 1:
            spec.append((name, "one"))
        else:
            spec.append((name, "i64" if abs(value) >= 2**31 else "i32", value % 16 == 0))
    return tuple(spec) + (("EVEN_K", ints["K"] % block_k == 0),)


def make_source(config: dict[str, int], ints: dict[str, int]) -> ASTSource:
    """The ASTSource the JIT would build for this config and these integer values."""
    names = list(grouped_gemm_kernel.arg_names)
    signature = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "expert_offsets_ptr": "*i32"}
    constexprs: dict[str, Any] = {
        "BLOCK_M": config["block_m"], "BLOCK_N": config["block_n"], "BLOCK_K": config["block_k"],
        "GROUP_M": config["group_m"], "EVEN_K": ints["K"] % config["block_k"] == 0,
    }
    divisible = ["a_ptr", "b_ptr", "c_ptr", "expert_offsets_ptr"]
    for name in INT_ARGS:
        value = ints[name]
        if name not in NOT_SPECIALIZED and value == 1:
            signature[name] = "constexpr"
            constexprs[name] = 1
            continue
        signature[name] = "i64" if abs(value) >= 2**31 else "i32"
        if name not in NOT_SPECIALIZED and value % 16 == 0:
            divisible.append(name)
    for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EVEN_K"):
        signature[name] = "constexpr"
    signature = {name: signature[name] for name in names}
    attrs = {(names.index(name),): [["tt.divisibility", 16]] for name in divisible}
    return ASTSource(grouped_gemm_kernel, signature, constexprs, attrs)


def compile_kernel(config: dict[str, int], ints: dict[str, int], capability: int):
    """Compile (or fetch from Triton's cache) for ``capability`` (90, 120, ...); nothing is loaded on a GPU."""
    return triton.compile(
        make_source(config, ints),
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": config["num_warps"], "num_stages": config["num_stages"]},
    )


def mma_kind(ptx: str) -> str:
    if "tcgen05.mma" in ptx:
        return "tcgen05"
    if "wgmma" in ptx:
        return "wgmma"
    if "mma.sync" in ptx:
        return "mma.sync"
    return "none"


def compile_task(config: dict[str, int], ints: dict[str, int], capability: int) -> dict[str, Any]:
    """Compile one config for one target and report its shared memory; never raises."""
    started = time.perf_counter()
    try:
        kernel = compile_kernel(config, ints, capability)
    except Exception as exc:  # noqa: BLE001 - a failed compile is a result
        return {
            "capability": capability, "ok": False, "compile_s": time.perf_counter() - started,
            "error": f"{type(exc).__qualname__}: {exc}"[:2000],
        }
    return {
        "capability": capability,
        "ok": True,
        "compile_s": time.perf_counter() - started,
        "shared_bytes": int(kernel.metadata.shared),
        "num_warps": int(kernel.metadata.num_warps),
        "num_stages": int(kernel.metadata.num_stages),
        "mma": mma_kind(kernel.asm.get("ptx", "")),
        "triton": triton.__version__,
    }
