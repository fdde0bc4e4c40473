"""Triton on CPU: compiling for SM90 and SM120 without either GPU, and the kernel's arithmetic in the interpreter.

Skipped where triton (and, for some tests, torch) is not installed, as in CI;
they ran on a developer machine with triton 3.6.0 and CPU torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

triton = pytest.importorskip("triton", reason="triton is not installed here (CI has no triton): nothing to compile with")

from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: E402
from reprokit.workloads.tile_sweep.tiles import TileConfig  # noqa: E402

EP8_GEMM1 = triton_kernel.int_args(4096, 6144, 1)


def compiled(config: TileConfig, capability: int) -> dict:
    cfg = {"block_m": config.block_m, "block_n": config.block_n, "block_k": config.block_k,
           "num_stages": config.num_stages, "num_warps": config.num_warps, "group_m": config.group_m}
    report = triton_kernel.compile_task(cfg, EP8_GEMM1, capability)
    assert report["ok"], report.get("error")
    return report


@pytest.mark.skipif(triton.__version__ != "3.6.0", reason="byte counts recorded for triton 3.6.0")
@pytest.mark.parametrize("config, capability, shared_bytes, mma", [
    # decode tile: mma.sync on both, stages-1 buffers of (16+64)x128 bf16
    (TileConfig(16, 64, 128, 4, 4), 90, 61440, "mma.sync"),
    (TileConfig(16, 64, 128, 4, 4), 120, 61440, "mma.sync"),
    (TileConfig(16, 128, 128, 4, 4), 120, 110592, "mma.sync"),  # over SM120's 101376
    # prefill tile: wgmma on SM90 buffers every stage, mma.sync on SM120 one fewer
    (TileConfig(128, 256, 64, 3, 8), 90, 147456, "wgmma"),
    (TileConfig(128, 256, 64, 3, 8), 120, 98304, "mma.sync"),
    (TileConfig(128, 128, 128, 4, 8), 90, 262144, "wgmma"),  # over SM90's 232448: OutOfResources on an H200
])
def test_shared_bytes_per_target(config, capability, shared_bytes, mma):
    report = compiled(config, capability)
    assert (report["shared_bytes"], report["mma"]) == (shared_bytes, mma)


def test_specialization_is_shared_by_all_glm5_shapes():
    from reprokit.workloads.tile_sweep.shapes import derive_problems

    model = {"hidden_size": 6144, "moe_intermediate_size": 2048, "n_routed_experts": 256, "num_experts_per_tok": 8}
    problems = derive_problems(model, ["tp8", "ep8"], [1, 64, 2048])
    specs = {triton_kernel.specialization(triton_kernel.int_args(p.n, p.k, -(-p.tokens_per_expert // 16)), 128)
             for p in problems}
    assert len(specs) == 1  # one compile per config covers every problem


def test_ahead_of_time_source_is_the_one_the_jit_builds():
    torch = pytest.importorskip("torch", reason="torch is needed to bind tensor arguments")
    from triton import knobs
    from triton._C.libtriton import get_cache_invalidating_env_vars
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.cache import get_cache_key
    from triton.runtime.jit import create_function_from_signature

    fn = triton_kernel.grouped_gemm_kernel
    backend = make_backend(GPUTarget("cuda", 90, 32))
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    tensors = [torch.empty(64, dtype=torch.bfloat16) for _ in range(3)] + [torch.zeros(33, dtype=torch.int32)]
    kwargs = dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=128, GROUP_M=8, EVEN_K=True, num_warps=4, num_stages=4,
                  debug=False, instrumentation_mode=knobs.compilation.instrumentation_mode)
    bound, spec, options = binder(*tensors, *[EP8_GEMM1[n] for n in triton_kernel.INT_ARGS], **kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, spec, options)
    jit_source = triton_kernel.ASTSource(fn, signature, constexprs, attrs)
    ours = triton_kernel.make_source(
        {"block_m": 16, "block_n": 64, "block_k": 128, "group_m": 8}, EP8_GEMM1)
    env = get_cache_invalidating_env_vars()
    ours_options = backend.parse_options({"num_warps": 4, "num_stages": 4})
    # Same key: the pool's compiles land in the cache the JIT then reads.
    assert get_cache_key(ours, backend, ours_options, env) == get_cache_key(jit_source, backend, options, env)


INTERPRETED = textwrap.dedent("""
    import os, sys, torch, triton
    from reprokit.workloads.tile_sweep.backends import triton_kernel as tk
    torch.manual_seed(0)
    worst = 0.0
    # ragged tails (5 and 40 rows), K not a multiple of BLOCK_K, GROUP_M swizzle
    for experts, rows, n, k, bm, bn, bk, group in [(3, 5, 96, 64, 16, 32, 32, 8), (2, 40, 64, 80, 16, 32, 32, 2)]:
        a = torch.randn(experts * rows, k).half()
        w = (torch.randn(experts, n, k) / k ** 0.5).half()
        c = torch.full((experts * rows, n), float("nan")).half()
        offsets = (torch.arange(experts + 1) * rows).int()
        num_m, num_n = triton.cdiv(rows, bm), triton.cdiv(n, bn)
        ints = tk.int_args(n, k, num_m)
        tk.grouped_gemm_kernel[(num_m * num_n, experts)](a, w, c, offsets, *[ints[x] for x in tk.INT_ARGS],
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, EVEN_K=k % bk == 0)
        ref = torch.bmm(a.float().view(experts, rows, k), w.float().transpose(1, 2)).reshape(-1, n)
        worst = max(worst, float((c.float() - ref).norm() / ref.norm()))
    print(worst)
""")


def test_kernel_arithmetic_in_the_interpreter(repo):
    pytest.importorskip("torch", reason="the interpreter runs on torch CPU tensors")
    numpy = pytest.importorskip("numpy", reason="the interpreter needs numpy")
    if tuple(int(x) for x in numpy.__version__.split(".")[:2]) >= (2, 4):
        pytest.skip(f"numpy {numpy.__version__}: triton {triton.__version__}'s interpreter calls int() on 1-element"
                    " arrays, which NumPy 2.4 made an error (seen on the H200 with numpy 2.5.2)")
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(repo))
    proc = subprocess.run([sys.executable, "-c", INTERPRETED], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.strip().splitlines()[-1]) < 1e-3  # fp16 output rounding only
