"""One rank of the EP MoE step, started by ``torch.distributed.run`` (one process per GPU).

Each rank holds ``experts / world_size`` experts, routes its own tokens (top-k of all experts), sends them to
the ranks holding their experts (``dispatch``), runs FlashInfer's CUTLASS fused MoE on what it received with
``ep_size``/``ep_rank`` (the release's own ``cutlass_fused_moe``, loaded through the reduced SM90 module), and
brings the partial outputs home (``combine``). The first step runs inside the release's ``autotune`` over the
configured token buckets, as a server's warmup does, so every rank's autotuner profiles every tactic it may.

What a rank writes (``rank<R>.json``): the tactics its autotuner profiled (per GEMM), those it skipped after a
failure, the blocklist and ``skip_ops`` lines it logged, the tactic it chose per bucket, its tuning time, and
each checked step's relative error against a float32 reference of its own experts. The log lines themselves go
to the process's stderr, which ``torch.distributed.run`` tees into the interleaved log and a file per rank.

    python -m torch.distributed.run --nproc-per-node N -m reprokit.workloads.ep_moe.rank --config C --out-dir D

Torch and flashinfer only (no control plane).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads.ep_moe import dispatch
from reprokit.workloads.facts.autotuner import PROFILED_TACTIC, SKIPPED_TACTIC
from reprokit.workloads.static_smem import reduced_module
from reprokit.workloads.static_smem.device_passes import moe_runner

KEPT_LINE = re.compile(r"\[TacticsBlocklist\]|skip_ops|Skipping tactic|Autotuning process")


class TunerLines(logging.Handler):
    """The autotuner's records of this process, kept as they are logged (the stderr copy is the tee's)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.profiled: list[int] = []
        self.failed: list[int] = []
        self.notable: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if (found := PROFILED_TACTIC.search(message)) is not None:
            self.profiled.append(int(found.group(2)))
        elif (found := SKIPPED_TACTIC.search(message)) is not None:
            self.failed.append(int(found.group(2)))
        if KEPT_LINE.search(message) and len(self.notable) < 40:
            self.notable.append(message[:300])


def expert_weights(config: dict[str, Any], local_experts: int, rank: int) -> tuple[Any, Any]:
    """This rank's experts: fc1 [E_local, 2I, H] (up then gate, as the kernel's Swiglu reads them), fc2 [E_local, H, I]."""
    import torch  # noqa: PLC0415

    generator = torch.Generator(device="cuda").manual_seed(config["seed"] * 1000 + rank)
    h, i = config["hidden"], config["intermediate"]
    fc1 = (torch.randn(local_experts, 2 * i, h, device="cuda", generator=generator) * config["weight_scale"]).bfloat16()
    fc2 = (torch.randn(local_experts, h, i, device="cuda", generator=generator) * config["weight_scale"]).bfloat16()
    return fc1, fc2


def routed_tokens(config: dict[str, Any], tokens: int, rank: int, step: int) -> tuple[Any, Any, Any]:
    """This rank's tokens and their routing: top-k of all experts by random router logits, softmax scales."""
    import torch  # noqa: PLC0415

    generator = torch.Generator(device="cuda").manual_seed(config["seed"] * 7919 + rank * 101 + step)
    x = torch.randn(tokens, config["hidden"], device="cuda", generator=generator).bfloat16()
    logits = torch.randn(tokens, config["experts"], device="cuda", generator=generator)
    top = torch.topk(logits, config["top_k"], dim=-1)
    return x, top.indices.to(torch.int32), torch.softmax(top.values, dim=-1).float()


def local_reference(x: Any, ids: Any, scales: Any, fc1: Any, fc2: Any, first_expert: int) -> Any:
    """Float32 sum over the received rows' experts that this rank holds: what its kernel output must equal."""
    import torch  # noqa: PLC0415

    intermediate = fc2.shape[2]
    local = ids.long() - first_expert
    ref = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float32, device=x.device)
    for expert in range(fc1.shape[0]):
        rows, slots = (local == expert).nonzero(as_tuple=True)
        if rows.numel() == 0:
            continue
        h = x[rows].float() @ fc1[expert].float().T
        act = torch.nn.functional.silu(h[:, intermediate:]) * h[:, :intermediate]
        ref.index_add_(0, rows, (act @ fc2[expert].float().T) * scales[rows, slots].unsqueeze(1))
    return ref


def moe_step(config: dict[str, Any], weights: tuple[Any, Any], tokens: int, step: int, world: tuple[int, int],
             tune_max: int) -> dict[str, Any]:
    """One EP MoE layer on ``tokens`` tokens per rank: route, dispatch, fused MoE, check, combine."""
    import torch  # noqa: PLC0415
    from flashinfer.fused_moe import cutlass_fused_moe  # noqa: PLC0415

    rank, world_size = world
    fc1, fc2 = weights
    local_experts = fc1.shape[0]
    x, ids, scales = routed_tokens(config, tokens, rank, step)
    plan = dispatch.plan(ids, local_experts, world_size)
    x_in, ids_in, scales_in = dispatch.dispatch(plan, [x, ids, scales])
    started = time.monotonic()
    out = cutlass_fused_moe(x_in, ids_in.contiguous(), scales_in.contiguous(), fc1, fc2, torch.bfloat16,
                            quant_scales=[], ep_size=world_size, ep_rank=rank, tune_max_num_tokens=tune_max)
    partial = out[0] if isinstance(out, (list, tuple)) else out
    torch.cuda.synchronize()
    kernel_s = time.monotonic() - started
    ref = local_reference(x_in, ids_in, scales_in, fc1, fc2, rank * local_experts)
    rel_err = float((partial.float() - ref).norm() / ref.norm().clamp_min(1e-30))
    combined = dispatch.combine(plan, partial, tokens)
    return {"tokens": tokens, "sent_rows": plan.send_counts, "received_rows": plan.recv_counts,
            "kernel_s": round(kernel_s, 3), "rel_err": rel_err,
            "finite": bool(torch.isfinite(combined).all().item()), "combined_rows": int(combined.shape[0])}


def chosen_tactics() -> list[dict[str, Any]]:
    """The autotuner's choice per op and bucket, from its in-memory cache (``ProfilingCacheKey`` -> (tactic, ...))."""
    from flashinfer.autotuner import AutoTuner  # noqa: PLC0415

    rows = []
    for key, value in AutoTuner.get().profiling_cache.items():
        profile = getattr(key, "nearest_profile", ())
        bucket = profile[0][0] if profile and profile[0] else None
        tactic = value[0] if isinstance(value, (list, tuple)) and value else value
        rows.append({"op": str(getattr(key, "custom_op", key)), "bucket_tokens": bucket,
                     "tactic": tactic if isinstance(tactic, int) else str(tactic)})
    return sorted(rows, key=lambda row: (row["op"], row["bucket_tokens"] or 0))


def run_rank(config: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415
    from flashinfer.autotuner import autotune, set_autotune_process_group  # noqa: PLC0415

    rank, world_size, local_rank = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    from flashinfer.jit.core import logger  # noqa: PLC0415 - not in logging's registry: getLogger() would give another

    lines = TunerLines()
    logger.addHandler(lines)
    reduced_module.install("bf16")
    local_experts = config["experts"] // world_size
    inner = moe_runner("bf16", config["top_k"], world_size, rank).fused_moe_runner
    gemm1_count = int(inner.get_gemm1_tactic_count())
    weights = expert_weights(config, local_experts, rank)
    group = None
    if config["process_group"]:  # the release's cross-rank tuning: per-tactic timings all-reduced over gloo
        group = dist.new_group(backend="gloo")
        set_autotune_process_group(group)
    buckets = tuple(config["tuning_buckets"])
    skip_ops = set(config["skip_ops"]) or None
    dist.barrier()
    started = time.monotonic()
    with autotune(True, tuning_buckets=buckets, skip_ops=skip_ops):
        tuned = moe_step(config, weights, max(config["tokens_per_rank"]), 0, (rank, world_size), max(buckets))
    tuning_s = time.monotonic() - started
    set_autotune_process_group(None)
    steps = [moe_step(config, weights, tokens, n + 1, (rank, world_size), max(buckets))
             for n, tokens in enumerate(config["tokens_per_rank"])]
    dist.barrier()
    profiled = sorted(set(lines.profiled))
    result = {
        "rank": rank, "world_size": world_size, "local_rank": local_rank, "device": torch.cuda.get_device_name(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid(),
        "experts": [rank * local_experts, (rank + 1) * local_experts - 1],
        "nccl_version": ".".join(str(v) for v in torch.cuda.nccl.version()),
        "gemm1_tactic_count": gemm1_count, "tuning_s": round(tuning_s, 2), "tuning_step": tuned,
        "profiled": {"gemm1": [t for t in profiled if t < gemm1_count], "gemm2": [t for t in profiled if t >= gemm1_count]},
        "profile_lines": len(lines.profiled), "failed_while_profiling": sorted(set(lines.failed)),
        "notable_lines": lines.notable, "chosen": chosen_tactics(), "steps": steps,
        "process_group": config["process_group"],
    }
    (out_dir / f"rank{rank}.json").write_text(json.dumps(result, indent=1) + "\n")
    if group is not None:
        dist.destroy_process_group(group)
    dist.destroy_process_group()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.ep_moe.rank")
    parser.add_argument("--config", type=Path, required=True, help="the scenario's config.json, written by the workload")
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    run_rank(json.loads(args.config.read_text()), args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
