"""The two passes of the device check, each run in a process of its own by ``device_check``.

``tactics``: every tactic of gemm1 and gemm2 forced through the release's ``MoERunner.forward(inputs, gemm_idx=,
tactic=, do_preparation=)``, as its autotuner profiles them. The process runs under the CUPTI injection library
(``cxx/smem_trace.cpp``, ``CUDA_INJECTION64_PATH``), so each tactic's trace lines hold what the launch really asked
for: ``cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, N)`` and ``cuLaunchKernel(Ex)``'s ``sharedMemBytes``.

``autotune``: FlashInfer's real autotuner over ``cutlass_fused_moe`` for a few batch sizes, with whatever
``FLASHINFER_TACTICS_BLOCKLIST`` the parent set, and optionally ``autotune(skip_ops=...)``. Its DEBUG log is the
record of which tactics were profiled (``[Autotuner]: profiling <runner> <tactic>, ...``).

    python -m reprokit.workloads.static_smem.device_passes tactics --dtype bf16 --out F.json --trace T.jsonl
    python -m reprokit.workloads.static_smem.device_passes autotune --dtype bf16 --out F.json [--skip-op OP]

Torch and flashinfer only (no control plane).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads.static_smem import reduced_module

TORCH_DTYPES = {"bf16": "bfloat16", "fp8": "float8_e4m3fn"}
GEMM_KERNEL_PREFIXES = ("_ZN7cutlass13device_kernel", "_ZN7cutlass6Kernel", "_ZN9fused_moe10run_global")
PROBLEM = {"hidden": 1024, "intermediate": 1024, "experts": 8, "top_k": 2}


def _trace_lines(trace: Path, start: int) -> tuple[list[dict[str, Any]], int]:
    if not trace.is_file():
        return [], start
    with open(trace, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    lines = []
    for raw in data.decode(errors="replace").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            lines.append({"unparsed": raw[:300]})
    return lines, start + len(data)


def _gemm_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The CUTLASS GEMM's attribute call(s) and launch(es) among a tactic's trace lines."""
    def is_gemm(name: str) -> bool:  # cutlass::device_kernel / cutlass::Kernel (MoeFCGemm), fused_moe::run_global
        return name.startswith(GEMM_KERNEL_PREFIXES)

    sets = [e for e in events if e.get("api", "").endswith("SetAttribute") and is_gemm(e.get("name", ""))]
    launches = [e for e in events if e.get("api", "").startswith("cuLaunchKernel") and is_gemm(e.get("name", ""))]
    return {"set_attribute": [{k: e.get(k) for k in ("seq", "api", "value", "result", "name")} for e in sets],
            "launches": [{k: e.get(k) for k in ("seq", "api", "shared_mem_bytes", "func_max_dynamic_smem", "func_static_smem",
                                                "grid", "block", "result", "name")} for e in launches],
            "requested_smem_bytes": sorted({e["value"] for e in sets} | {e["shared_mem_bytes"] for e in launches}),
            "other_launches": sorted({e.get("name", "")[:80] for e in events
                                      if e.get("api", "").startswith("cuLaunchKernel") and not is_gemm(e.get("name", ""))})}


def moe_runner(dtype: str, top_k: int, ep_size: int = 1, ep_rank: int = 0):
    """The release's ``MoERunner`` of the SM90 module, built as ``cutlass_fused_moe`` builds it (BF16, Swiglu)."""
    import torch  # noqa: PLC0415
    from flashinfer.fused_moe import core  # noqa: PLC0415

    module = core.get_cutlass_fused_moe_module("90")
    element = getattr(torch, TORCH_DTYPES[dtype])
    return module.MoERunner(
        x_dtype=element, weight_dtype=element, output_dtype=torch.bfloat16, top_k=top_k, tp_size=1,
        tp_rank=0, ep_size=ep_size, ep_rank=ep_rank, cluster_size=1, cluster_rank=0, enable_alltoall=False,
        use_deepseek_fp8_block_scale=False, use_w4_group_scaling=False, use_mxfp8_act_scaling=False,
        min_latency_mode=False, enable_pdl=False, activation_type=core.ActivationType.Swiglu,
        use_packed_weights=False, use_fused_finalize=True, use_wfp4afp8_humming=False)


def _runner_and_inputs(dtype: str, tokens: int):
    import torch  # noqa: PLC0415

    runner = moe_runner(dtype, PROBLEM["top_k"])
    element = getattr(torch, TORCH_DTYPES[dtype])
    h, i, e = PROBLEM["hidden"], PROBLEM["intermediate"], PROBLEM["experts"]
    x = torch.randn(tokens, h, device="cuda").to(element)
    fc1 = (torch.randn(e, 2 * i, h, device="cuda") * 0.05).to(element)
    fc2 = (torch.randn(e, h, i, device="cuda") * 0.05).to(element)
    return runner, [x, fc1, None, fc2, None]


def tactics_pass(dtype: str, tokens: int, trace: Path, start: int = 0, rows_file: Path | None = None) -> dict[str, Any]:
    """Every tactic from ``start`` on; each row is also appended to ``rows_file`` as it is done. After a failure
    that leaves the context unusable (a sticky CUDA error), the pass stops (``stopped_after``): a fresh process
    continues from the next tactic."""
    import torch  # noqa: PLC0415

    started = time.monotonic()
    runner, inputs = _runner_and_inputs(dtype, tokens)
    inner = runner.fused_moe_runner
    first, second = int(inner.get_gemm1_tactic_count()), int(inner.get_gemm2_tactic_count())
    occupancy = getattr(inner, "get_tactic_occupancy", None)
    _, offset = _trace_lines(trace, 0)
    rows: list[dict[str, Any]] = []
    stopped_after = None
    for gemm_idx, all_tactics in ((1, range(first)), (2, range(first, first + second))):
        tactics = [t for t in all_tactics if t >= start]
        if not tactics or stopped_after is not None:
            continue
        runner.forward(inputs, gemm_idx=gemm_idx, tactic=-1, do_preparation=True)  # as the autotuner prepares
        torch.cuda.synchronize()
        for tactic in tactics:
            row: dict[str, Any] = {"gemm_idx": gemm_idx, "tactic": tactic}
            if occupancy is not None:
                try:
                    row["occupancy"] = int(occupancy(tactic))
                except Exception as exc:  # noqa: BLE001 - recorded
                    row["occupancy_error"] = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            try:
                runner.forward(inputs, gemm_idx=gemm_idx, tactic=tactic)
                torch.cuda.synchronize()
                row["launched"] = True
            except Exception as exc:  # noqa: BLE001 - the failure is the finding
                text = str(exc)
                row.update(launched=False, error=text.splitlines()[0][:400] if text else type(exc).__name__)
                try:
                    torch.cuda.synchronize()
                except Exception as sticky:  # noqa: BLE001 - the context is lost: a fresh process goes on
                    row["sticky_error"] = str(sticky).splitlines()[0][:300] if str(sticky) else type(sticky).__name__
                    stopped_after = tactic
            events, offset = _trace_lines(trace, offset)
            row.update(_gemm_events(events))
            rows.append(row)
            if rows_file is not None:
                with open(rows_file, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
            if stopped_after is not None:
                break
    return {"tactic_counts": {"gemm1": first, "gemm2": second}, "tokens": tokens, "problem": PROBLEM, "rows": rows,
            "start": start, "stopped_after": stopped_after, "pass_s": round(time.monotonic() - started, 1), "injection_initialised": _injection_seen(trace)}


def _injection_seen(trace: Path) -> bool:
    return trace.is_file() and '"InitializeInjection"' in trace.read_text(errors="replace")[:4096]


def autotune_pass(dtype: str, batch_sizes: list[int], tune_max: int, skip_ops: list[str]) -> dict[str, Any]:
    """FlashInfer's autotuner over cutlass_fused_moe; which tactics it chose per batch size (the log says which it tried)."""
    import flashinfer  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from flashinfer.autotuner import autotune  # noqa: PLC0415
    from flashinfer.fused_moe import cutlass_fused_moe  # noqa: PLC0415

    started = time.monotonic()
    element = getattr(torch, TORCH_DTYPES[dtype])
    h, i, e, k = PROBLEM["hidden"], PROBLEM["intermediate"], PROBLEM["experts"], PROBLEM["top_k"]
    fc1 = (torch.randn(e, 2 * i, h, device="cuda") * 0.05).to(element)
    fc2 = (torch.randn(e, h, i, device="cuda") * 0.05).to(element)
    results = []
    context = autotune(True, skip_ops=set(skip_ops)) if skip_ops else autotune(True)
    with context:
        for tokens in batch_sizes:
            x = torch.randn(tokens, h, device="cuda").to(element)
            experts = torch.stack([torch.randperm(e, device="cuda")[:k] for _ in range(tokens)]).to(torch.int32)
            scales = torch.softmax(torch.randn(tokens, k, device="cuda"), dim=-1).float()
            out = cutlass_fused_moe(x, experts, scales, fc1, fc2, torch.bfloat16, quant_scales=[],
                                    tune_max_num_tokens=tune_max)
            out = out[0] if isinstance(out, (list, tuple)) else out
            torch.cuda.synchronize()
            results.append({"tokens": tokens, "finite": bool(torch.isfinite(out).all().item())})
    from flashinfer.autotuner import AutoTuner  # noqa: PLC0415

    tuner = AutoTuner.get()
    chosen = sorted({(str(getattr(key, "custom_op", key)), str(getattr(key, "nearest_profile", "")), str(value))
                     for key, value in tuner.profiling_cache.items()})
    return {"flashinfer": flashinfer.__version__, "batch_sizes": batch_sizes, "tune_max_num_tokens": tune_max,
            "skip_ops": skip_ops, "calls": results, "cached_choices": [list(c) for c in chosen],
            "blocklist_loaded": getattr(getattr(tuner, "_blocklist", None), "_loaded_path", None),
            "pass_s": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.device_passes")
    parser.add_argument("which", choices=("tactics", "autotune"))
    parser.add_argument("--dtype", default="bf16", choices=sorted(TORCH_DTYPES))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--trace", type=Path)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--batch-sizes", default="4,32,64")
    parser.add_argument("--tune-max", type=int, default=64)
    parser.add_argument("--skip-op", action="append", default=[])
    parser.add_argument("--start", type=int, default=0, help="tactics pass: the first tactic to force")
    parser.add_argument("--rows", type=Path, help="tactics pass: append each row to this JSON-lines file")
    args = parser.parse_args(argv)
    facts = reduced_module.install(args.dtype)
    if args.which == "tactics":
        result = tactics_pass(args.dtype, args.tokens, args.trace, args.start, args.rows)
    else:
        result = autotune_pass(args.dtype, [int(b) for b in args.batch_sizes.split(",")], args.tune_max, args.skip_op)
    result["module"] = {k: facts[k] for k in ("module", "library", "objects")}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 3 if result.get("stopped_after") is not None else 0


if __name__ == "__main__":
    sys.exit(main())
