"""Triton backend: a grouped per-expert GEMM, swept over tile configurations on any NVIDIA GPU.

For every configuration it records, in this order:
1. the shared memory it compiles to for the present GPU and for each cross
   target (SM120), compiled in a process pool without touching a GPU: the
   prediction;
2. whether the CUDA driver grants that much to the compiled cubin
   (``cuFuncSetAttribute``, the call whose refusal CUTLASS turns into
   ``Error Internal``) and whether Triton loads it or raises ``OutOfResources``:
   the observation;
3. for each problem it runs on: the relative error against a float32 torch
   reference on fresh random inputs, and the median time with a cold L2.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from reprokit.workloads.contract import count_progress, progress
from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH, capability_of
from reprokit.workloads.tile_sweep import classify, roofline
from reprokit.workloads.tile_sweep.context import SweepContext
from reprokit.workloads.tile_sweep.shapes import GemmProblem
from reprokit.workloads.tile_sweep.targets import CROSS_TARGET_ARCHES
from reprokit.workloads.tile_sweep.tiles import TileConfig

NAME = "triton"
REL_ERROR_TOLERANCE = 1e-2  # bf16 output rounding alone gives ~1e-3
FILL_BEFORE_CHECK = float("nan")  # a kernel that writes nothing cannot pass the check
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def unavailable(ctx: SweepContext) -> str | None:
    try:
        import triton  # noqa: F401, PLC0415
    except ImportError as exc:
        return f"triton is not importable: {exc}"
    if not ctx.has_gpu:
        return "no CUDA device: only the compile-time prediction ran"
    return None


# ---------------------------------------------------------------- prediction (no GPU needed)

def _config_dict(config: TileConfig) -> dict[str, int]:
    return {
        "block_m": config.block_m, "block_n": config.block_n, "block_k": config.block_k,
        "num_stages": config.num_stages, "num_warps": config.num_warps, "group_m": config.group_m,
    }


def _ints(problem: GemmProblem, config: TileConfig) -> dict[str, int]:
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    return triton_kernel.int_args(problem.n, problem.k, math.ceil(problem.tokens_per_expert / config.block_m))


def compile_predictions(
    configs: list[TileConfig], problems: list[GemmProblem], native_arch: str | None,
) -> dict[str, dict[str, Any]]:
    """``{config_id: {arch: compile report}}`` for the native arch and every cross target.

    Problems that share Triton's specialization share a kernel; when they do
    not, the report of each distinct kernel is kept under ``variants``.
    """
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    arches = ([native_arch] if native_arch else []) + [a for a in CROSS_TARGET_ARCHES if a != native_arch]
    tasks: list[tuple[str, str, tuple, dict, dict]] = []
    for config in configs:
        seen = set()
        for problem in problems:
            ints = _ints(problem, config)
            spec = triton_kernel.specialization(ints, config.block_k)
            if spec in seen:
                continue
            seen.add(spec)
            for arch in arches:
                tasks.append((config.id, arch, spec, _config_dict(config), ints))
    started = time.perf_counter()
    reports = _run_compile_tasks(tasks)
    progress(f"sweep[triton]: compiled {len(tasks)} kernels for {', '.join(arches)} in {time.perf_counter() - started:.1f} s")
    by_config: dict[str, dict[str, Any]] = {}
    for (config_id, arch, *_task), report in zip(tasks, reports):
        entry = by_config.setdefault(config_id, {})
        if arch in entry:
            entry[arch].setdefault("variants", []).append(report)
        else:
            entry[arch] = report
    return by_config


def _run_compile_tasks(tasks: list[tuple]) -> list[dict[str, Any]]:
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    workers = min(len(tasks), os.cpu_count() or 1, 16)
    if workers > 1:
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = [pool.submit(triton_kernel.compile_task, cfg, ints, capability_of(arch))
                           for (_cid, arch, _spec, cfg, ints) in tasks]
                reports = []
                for future in futures:
                    try:
                        reports.append(future.result())
                    except Exception as exc:  # noqa: BLE001 - a dead worker is a result, not a crash
                        reports.append({"ok": False, "error": f"compile worker failed: {type(exc).__name__}: {exc}"})
                return reports
        except (OSError, ImportError, NotImplementedError) as exc:  # no sem_open, no /dev/shm, ...
            progress(f"sweep[triton]: no process pool ({exc}); compiling serially")
    return [triton_kernel.compile_task(cfg, ints, capability_of(arch)) for (_cid, arch, _spec, cfg, ints) in tasks]


def config_entries(configs: list[TileConfig], compiled: dict[str, dict[str, Any]], limits: dict[str, int]) -> list[dict]:
    """One entry per config: its tile, the static estimate, and per arch the compiled bytes and predicted fit."""
    entries = []
    for config in configs:
        per_arch = compiled.get(config.id, {})
        predicted = {}
        for arch, report in per_arch.items():
            sizes = [report] + report.get("variants", [])
            if all(r.get("ok") for r in sizes) and arch in limits:
                predicted[arch] = max(r["shared_bytes"] for r in sizes) <= limits[arch]
            else:
                predicted[arch] = None
        entries.append({**config.as_dict(), "compiled": per_arch, "limits_bytes": {a: limits.get(a) for a in per_arch},
                        "predicted_fits": predicted})
    return entries


# ---------------------------------------------------------------- observation (GPU)

def driver_grants(cubin: bytes, kernel_name: str, shared_bytes: int, device_index: int) -> dict[str, Any]:
    """Ask the CUDA driver to opt this cubin's kernel in to ``shared_bytes`` of dynamic shared memory.

    The same request CUTLASS's ``initialize()`` makes; its refusal is what
    surfaces as ``Error Internal``. Runs in the current (torch's primary) context.
    """
    from reprokit.workloads import smem_probe  # noqa: PLC0415

    drv = smem_probe.Driver()
    module = ctypes.c_void_p()
    outcome: dict[str, Any] = {"requested_bytes": shared_bytes}
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    drv.check("cuDeviceGet", ctypes.byref(dev), device_index)
    drv.check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    drv.check("cuCtxSetCurrent", ctx)
    try:
        code = drv.call("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(cubin))
        if code != 0:
            return {**outcome, "ok": None, "error_name": drv.error_name(code), "step": "cuModuleLoadData"}
        func = ctypes.c_void_p()
        code = drv.call("cuModuleGetFunction", ctypes.byref(func), module, kernel_name.encode())
        if code != 0:
            return {**outcome, "ok": None, "error_name": drv.error_name(code), "step": "cuModuleGetFunction"}
        code = drv.call("cuFuncSetAttribute", func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        ctypes.c_int(shared_bytes))
        return {**outcome, "ok": code == 0, "error_name": None if code == 0 else drv.error_name(code),
                "step": "cuFuncSetAttribute"}
    finally:
        if module.value:
            drv.call("cuModuleUnload", module)
        drv.call("cuDevicePrimaryCtxRelease", dev)


def _observe_driver(config: TileConfig, problem: GemmProblem, native_arch: str, device_index: int) -> dict[str, Any]:
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    try:
        kernel = triton_kernel.compile_kernel(_config_dict(config), _ints(problem, config), capability_of(native_arch))
        return driver_grants(kernel.asm["cubin"], kernel.metadata.name, int(kernel.metadata.shared), device_index)
    except Exception as exc:  # noqa: BLE001
        return {"ok": None, "error": classify.describe_exception(exc)}


class _ProblemData:
    """Inputs, output and float32 reference of one problem, on the GPU."""

    def __init__(self, torch: Any, problem: GemmProblem, seed: int):
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        e, t, n, k = problem.experts, problem.tokens_per_expert, problem.n, problem.k
        self.a = torch.randn((e * t, k), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        self.b = (torch.randn((e, n, k), generator=gen, device="cuda", dtype=torch.float32) / math.sqrt(k)).to(torch.bfloat16)
        self.c = torch.empty((e * t, n), device="cuda", dtype=torch.bfloat16)
        self.offsets = (torch.arange(e + 1, device="cuda", dtype=torch.int32) * t).contiguous()
        self.ref = torch.bmm(self.a.view(e, t, k).float(), self.b.float().transpose(1, 2)).view(e * t, n)
        self.ref_norm = float(torch.linalg.vector_norm(self.ref))

    def rel_error(self, torch: Any) -> float | None:
        """||C - ref|| / ||ref||; None when C holds NaN or Inf (e.g. rows the kernel never wrote)."""
        diff = float(torch.linalg.vector_norm(self.c.float() - self.ref))
        value = diff / self.ref_norm if self.ref_norm else math.inf
        return value if math.isfinite(value) else None


def _launcher(data: _ProblemData, problem: GemmProblem, config: TileConfig):
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    num_m = math.ceil(problem.tokens_per_expert / config.block_m)
    num_n = math.ceil(problem.n / config.block_n)
    ints = triton_kernel.int_args(problem.n, problem.k, num_m)
    args = [ints[name] for name in triton_kernel.INT_ARGS]
    grid = (num_m * num_n, problem.experts)
    kernel = triton_kernel.grouped_gemm_kernel

    def launch():
        return kernel[grid](
            data.a, data.b, data.c, data.offsets, *args,
            BLOCK_M=config.block_m, BLOCK_N=config.block_n, BLOCK_K=config.block_k,
            GROUP_M=config.group_m, EVEN_K=problem.k % config.block_k == 0,
            num_warps=config.num_warps, num_stages=config.num_stages,
        )

    return launch, grid[0] * grid[1]


def _row(problem: GemmProblem, config: TileConfig, **fields: Any) -> dict[str, Any]:
    return {"backend": NAME, "config": config.id, "problem": problem.id, **fields}


def _measure(ctx: SweepContext, data: _ProblemData, problem: GemmProblem, config: TileConfig,
             loads: dict[str, dict]) -> dict[str, Any]:
    torch = ctx.torch
    launch, ctas = _launcher(data, problem, config)
    data.c.fill_(FILL_BEFORE_CHECK)
    started = time.perf_counter()
    try:
        kernel = launch()
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - every failure is a row
        error = classify.describe_exception(exc)
        loads.setdefault(config.id, {"outcome": error["class"], "error": error,
                                     "first_launch_s": time.perf_counter() - started})
        if error["sticky"]:
            ctx.lost_context = f"{problem.id} {config.id}: {error['text'][:300]}"
        return _row(problem, config, outcome="failed", error=error, ctas=ctas)
    metadata = getattr(kernel, "metadata", None)
    loads.setdefault(config.id, {
        "outcome": "loaded", "shared_bytes": int(metadata.shared) if metadata is not None else None,
        "n_regs": getattr(kernel, "n_regs", None), "n_spills": getattr(kernel, "n_spills", None),
        "first_launch_s": time.perf_counter() - started,
    })
    rel_error = data.rel_error(torch)
    correct = rel_error is not None and rel_error <= REL_ERROR_TOLERANCE
    estimate = roofline.time_cuda(torch, launch, warmup=0, reps=1, flush=None)["median_s"]
    timing = roofline.time_cuda(torch, launch, warmup=1, reps=roofline.reps_for(estimate), flush=ctx.flush)
    scores = roofline.score(problem.flops, problem.min_bytes(), timing["median_s"],
                            ctx.ceilings["dense_gemm_tflops"], ctx.ceilings["copy_gbps"])
    return _row(problem, config, outcome="ok" if correct else "wrong_result", error=None,
                rel_error=rel_error, correct=correct, ctas=ctas,
                time_median_s=timing["median_s"], time_min_s=timing["min_s"], reps=timing["reps"], **scores)


def run(ctx: SweepContext) -> dict[str, Any]:
    torch = ctx.torch
    native = ctx.device["gpu_arch"]
    limits = {native: ctx.device["smem_optin_bytes"]}

    for arch in CROSS_TARGET_ARCHES:
        limits.setdefault(arch, SMEM_OPTIN_BYTES_BY_ARCH[arch])

    compile_started = time.perf_counter()
    compiled = compile_predictions(ctx.configs, ctx.problems, native)
    configs = config_entries(ctx.configs, compiled, limits)
    compile_s = time.perf_counter() - compile_started

    by_id = {entry["id"]: entry for entry in configs}
    for config in ctx.configs:
        by_id[config.id]["driver_optin"] = _observe_driver(config, ctx.problems[0], native, ctx.device["index"])

    launch_overhead = _launch_overhead(ctx)
    loads: dict[str, dict] = {}
    rows: list[dict] = []
    problem_wall_s: dict[str, float] = {}
    for index, problem in enumerate(ctx.problems):
        started = time.perf_counter()
        rows.extend(_run_problem(ctx, problem, index, loads))
        problem_wall_s[problem.id] = time.perf_counter() - started
        count_progress("sweep triton problems", index + 1, len(ctx.problems), problem.id)
        torch.cuda.empty_cache()
    for config in ctx.configs:
        by_id[config.id]["launch"] = loads.get(config.id, {"outcome": "not_attempted"})
    return {
        "status": "ran",
        "configs": configs,
        "rows": rows,
        "launch_overhead_s": launch_overhead,
        "compile_s": compile_s,
        "problem_wall_s": problem_wall_s,
        "rel_error_tolerance": REL_ERROR_TOLERANCE,
    }


def _run_problem(ctx: SweepContext, problem: GemmProblem, index: int, loads: dict) -> list[dict]:
    torch = ctx.torch
    if ctx.lost_context:
        return [_row(problem, c, outcome="skipped", skip_reason=f"CUDA context lost: {ctx.lost_context}")
                for c in ctx.configs]
    if ctx.out_of_time():
        return [_row(problem, c, outcome="skipped", skip_reason=f"time budget of {ctx.time_budget_s:g} s spent")
                for c in ctx.configs]
    try:
        data = _ProblemData(torch, problem, seed=1000 + index)
    except Exception as exc:  # noqa: BLE001 - e.g. out of memory for a huge prefill problem
        error = classify.describe_exception(exc)
        return [_row(problem, c, outcome="skipped", skip_reason=f"inputs could not be made: {error['text'][:300]}")
                for c in ctx.configs]
    rows = []
    try:
        for config in ctx.configs:
            if ctx.lost_context:
                rows.append(_row(problem, config, outcome="skipped", skip_reason=f"CUDA context lost: {ctx.lost_context}"))
            elif ctx.out_of_time():
                rows.append(_row(problem, config, outcome="skipped",
                                 skip_reason=f"time budget of {ctx.time_budget_s:g} s spent"))
            else:
                rows.append(_measure(ctx, data, problem, config, loads))
    finally:
        del data
    best = min((r for r in rows if r["outcome"] == "ok"), key=lambda r: r["time_median_s"], default=None)
    progress(f"sweep[triton]: {problem.id}: {sum(r['outcome'] == 'ok' for r in rows)}/{len(rows)} ok"
             + (f", best {best['config']} {best['time_median_s'] * 1e6:.0f} us, {best['gbps']:.0f} GB/s,"
                f" {best['tflops']:.0f} TFLOP/s, {best['fraction_of_roofline']:.0%} of roofline" if best else ""))
    return rows


def _launch_overhead(ctx: SweepContext) -> dict[str, Any] | None:
    """GPU time between the events around an empty Triton kernel: the fixed cost every launch pays on the GPU.

    The L2 flush before each one keeps the GPU busy while the host launches, so
    the host's launch latency stays outside the events (as in every timed row)."""
    from reprokit.workloads.tile_sweep.backends import triton_kernel  # noqa: PLC0415

    torch = ctx.torch
    x = torch.empty(16, device="cuda")
    try:
        timing = roofline.time_cuda(torch, lambda: triton_kernel.empty_kernel[(1,)](x), warmup=3, reps=50,
                                    flush=ctx.flush)
    except Exception as exc:  # noqa: BLE001
        return {"error": classify.describe_exception(exc)}
    return {"median_s": timing["median_s"], "min_s": timing["min_s"]}
