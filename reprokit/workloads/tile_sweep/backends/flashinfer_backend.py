"""FlashInfer backend: the CUTLASS fused MoE's GEMM tactics, forced one at a time, as its autotuner does.

Runs only where FlashInfer imports and the GPU is SM100 or SM120 (the
architectures whose NVFP4 grouped GEMM tiles are in question). For each
problem it builds FlashInfer's own ``MoERunner`` (NVFP4 weights, the layout
sglang's ``flashinfer_cutlass`` backend passes) and calls
``forward(..., gemm_idx, tactic, do_preparation)`` exactly as
``AutoTuner.choose_one`` profiles a tactic. Each tactic's outcome is a row:
``ok``, or the exception text with its class (``error_internal_init`` is the
SM120 shared-memory failure, ``unsupported_tile_shape`` a dispatch gap).

The runner's constructor has grown arguments release by release, so it is
called with the keywords its signature accepts.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from reprokit.workloads.contract import count_progress, progress
from reprokit.workloads.facts.tiles import FP4_BITS
from reprokit.workloads.tile_sweep import classify, roofline
from reprokit.workloads.tile_sweep.context import SweepContext
from reprokit.workloads.tile_sweep.shapes import GemmProblem, parse_parallelism

NAME = "flashinfer"
SUPPORTED_MAJORS = (10, 12)  # SM100/SM103 and SM120/SM121
FP4_PER_INT64 = 16
FP4_PER_BYTE = 2


def unavailable(ctx: SweepContext) -> str | None:
    if not ctx.has_gpu:
        return "no CUDA device"
    try:
        import flashinfer  # noqa: F401, PLC0415
        installed = None
    except Exception as exc:  # noqa: BLE001 - ImportError or a broken install
        installed = f"flashinfer is not importable here ({type(exc).__name__}: {exc})"
    major = ctx.device["capability"][0]
    if major not in SUPPORTED_MAJORS:
        return (f"the device is {ctx.device['gpu_arch']}: the NVFP4 CUTLASS MoE tactics under test exist for"
                " SM100/SM120 only (FlashInfer picks its fused-MoE module by the device's arch)"
                + (f"; also, {installed}" if installed else ""))
    return installed


def _runner_kwargs(runner_cls: type, torch: Any, problem: GemmProblem, top_k: int) -> dict[str, Any]:
    kind, degree = parse_parallelism(problem.parallelism)
    known: dict[str, Any] = {
        "x_dtype": torch.uint8, "weight_dtype": torch.int64, "output_dtype": torch.bfloat16,
        "top_k": top_k,
        "tp_size": degree if kind == "tp" else 1, "tp_rank": 0,
        "ep_size": degree if kind == "ep" else 1, "ep_rank": 0,
        "cluster_size": 1, "cluster_rank": 0,
        "enable_alltoall": False, "use_deepseek_fp8_block_scale": False, "use_w4_group_scaling": False,
        "use_w4a8_group_scaling": False, "use_mxfp8_act_scaling": False, "min_latency_mode": False,
        "enable_pdl": False, "use_packed_weights": False, "use_fused_finalize": True,
        "use_wfp4afp8_humming": False,
    }
    kwargs = {}
    for name, param in inspect.signature(runner_cls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in known:
            kwargs[name] = known[name]
        elif name == "activation_type":
            from flashinfer.fused_moe.core import ActivationType  # noqa: PLC0415

            kwargs[name] = ActivationType.Swiglu
        elif param.default is inspect.Parameter.empty:
            kwargs[name] = False  # a flag this reprokit does not know yet: off, as its default would be
    return kwargs


def _tactics(runner: Any) -> dict[int, list[int]]:
    inner = runner.fused_moe_runner
    if hasattr(inner, "get_gemm1_tactic_count"):
        first, second = int(inner.get_gemm1_tactic_count()), int(inner.get_gemm2_tactic_count())
        return {1: list(range(first)), 2: list(range(first, first + second))}
    every = list(range(int(inner.get_tactic_num())))
    return {1: every, 2: every}


def _inputs(torch: Any, problem: GemmProblem, hidden: int, intermediate: int, tokens: int) -> list:
    experts = problem.experts
    x = torch.randint(0, 256, (tokens, hidden // FP4_PER_BYTE), dtype=torch.uint8, device="cuda")
    fc1 = torch.randint(-2**62, 2**62, (experts, 2 * intermediate, hidden // FP4_PER_INT64), dtype=torch.int64, device="cuda")
    fc2 = torch.randint(-2**62, 2**62, (experts, hidden, intermediate // FP4_PER_INT64), dtype=torch.int64, device="cuda")
    return [x, fc1, None, fc2, None]


def run(ctx: SweepContext) -> dict[str, Any]:
    torch = ctx.torch
    model_config = ctx.model_config
    import flashinfer  # noqa: PLC0415
    from flashinfer.fused_moe import core  # noqa: PLC0415

    arch = f"{ctx.device['capability'][0] * 10 + ctx.device['capability'][1]}"
    started = time.perf_counter()
    try:
        module = core.get_cutlass_fused_moe_module(arch)
    except Exception as exc:  # noqa: BLE001
        return {"status": "failed", "reason": f"could not build/load FlashInfer's SM{arch} CUTLASS MoE module",
                "error": classify.describe_exception(exc), "rows": []}
    module_s = time.perf_counter() - started
    top_k = int(model_config["num_experts_per_tok"])
    routed = int(model_config["n_routed_experts"])
    rows: list[dict] = []
    # One problem per (parallelism, tokens): a tactic of GEMM1 and one of GEMM2 profile the same runner.
    gemm1_problems = [p for p in ctx.problems if p.gemm == "gemm1"]
    for done, problem in enumerate(gemm1_problems):
        count_progress("sweep flashinfer problems", done, len(gemm1_problems), f"next {problem.id}")
        tokens = problem.tokens_per_expert * routed // top_k
        hidden, intermediate = problem.k, problem.n // 2
        if ctx.lost_context or ctx.out_of_time():
            reason = f"CUDA context lost: {ctx.lost_context}" if ctx.lost_context else "time budget spent"
            rows.append({"backend": NAME, "config": "*", "problem": problem.id, "outcome": "skipped", "skip_reason": reason})
            continue
        try:
            runner = module.MoERunner(**_runner_kwargs(module.MoERunner, torch, problem, top_k))
            inputs = _inputs(torch, problem, hidden, intermediate, tokens)
            tactics = _tactics(runner)
        except Exception as exc:  # noqa: BLE001
            rows.append({"backend": NAME, "config": "*", "problem": problem.id, "outcome": "failed",
                         "error": classify.describe_exception(exc)})
            continue
        for gemm_idx, tactic_ids in tactics.items():
            problem_id = problem.id.replace("gemm1", f"gemm{gemm_idx}")
            for tactic in tactic_ids:
                rows.append(_run_tactic(ctx, runner, inputs, gemm_idx, tactic, problem_id, tokens))
                if ctx.lost_context:
                    break
        failed = sum(r["outcome"] == "failed" for r in rows if r["problem"].endswith(f"t{problem.tokens_per_expert}")
                     and r["problem"].startswith(problem.parallelism))
        progress(f"sweep[flashinfer]: {problem.parallelism} t={problem.tokens_per_expert}: {failed} tactics failed")
        del inputs, runner
        torch.cuda.empty_cache()
    count_progress("sweep flashinfer problems", len(gemm1_problems), len(gemm1_problems))
    return {"status": "ran", "flashinfer": getattr(flashinfer, "__version__", None), "module_s": module_s,
            "module_arch": arch, "rows": rows}


def _run_tactic(ctx: SweepContext, runner: Any, inputs: list, gemm_idx: int, tactic: int, problem_id: str,
                tokens: int) -> dict[str, Any]:
    torch = ctx.torch
    row: dict[str, Any] = {"backend": NAME, "config": f"gemm{gemm_idx}-tactic{tactic}", "problem": problem_id,
                           "tactic": tactic, "gemm_idx": gemm_idx, "num_tokens": tokens}
    try:
        runner.forward(inputs, gemm_idx=gemm_idx, tactic=tactic, do_preparation=True)
        timing = roofline.time_cuda(torch, lambda: runner.forward(inputs, gemm_idx=gemm_idx, tactic=tactic),
                                    warmup=1, reps=5, flush=ctx.flush)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the failure is the finding
        error = classify.describe_exception(exc, limit=6000)
        tile = classify.tile_from_error(str(exc), FP4_BITS)  # the runner's activations are NVFP4
        if error["sticky"]:
            ctx.lost_context = f"{problem_id} tactic {tactic}: {error['text'][:300]}"
        return {**row, "outcome": "failed", "error": error, "tile": tile}
    return {**row, "outcome": "ok", "error": None, "time_median_s": timing["median_s"]}
