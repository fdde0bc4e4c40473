"""The static prediction checked on a real GPU: FlashInfer's CUTLASS fused MoE, every tactic forced.

On the GPU host (torch and the flashinfer wheel installed): build FlashInfer's fused-MoE module for the device's
arch (its JIT: ninja + nvcc, timed, and how far it got when it does not finish), then force each tactic of
``trtllm::fused_moe::gemm1`` / ``gemm2`` through ``MoERunner.forward(..., gemm_idx, tactic, do_preparation)``
as the autotuner profiles it, and set each outcome beside the static analysis' prediction for that tactic
(``predicted``: a static-smem result.json of the same release, arch and dtype). A tactic predicted to fit must
launch; one predicted to exceed must fail at initialisation.

    python -m reprokit.workloads.static_smem.device_check --predicted R.json --out-dir DIR [--jit-timeout-s 420]

Standard library, torch and flashinfer only (no control plane).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DTYPES = {"fp8": "float8_e4m3fn", "bf16": "bfloat16"}
BUILD_SNIPPET = """
import json, sys, time
started = time.monotonic()
from flashinfer.fused_moe import core
arch = sys.argv[1]
try:
    core.get_cutlass_fused_moe_module(arch)
    print(json.dumps({"built": True, "build_s": round(time.monotonic() - started, 1)}))
except Exception as exc:
    print(json.dumps({"built": False, "build_s": round(time.monotonic() - started, 1), "error": str(exc)[-2000:]}))
"""


def ninja_progress(workspace: Path) -> dict[str, Any]:
    """What the JIT's ninja build finished: targets in build.ninja against entries of .ninja_log (with their times)."""
    found: dict[str, Any] = {}
    for ninja_file in workspace.rglob("build.ninja"):
        if "fused_moe" not in str(ninja_file.parent):
            continue
        targets = [line for line in ninja_file.read_text(errors="replace").splitlines()
                   if re.match(r"build \S+\.o:", line)]
        log = ninja_file.parent / ".ninja_log"
        done, longest_ms, total_ms = 0, 0, 0
        if log.is_file():
            for line in log.read_text(errors="replace").splitlines()[1:]:
                parts = line.split("\t")
                if len(parts) >= 4 and parts[3].endswith(".o"):
                    done += 1
                    took = int(parts[1]) - int(parts[0])
                    longest_ms, total_ms = max(longest_ms, took), total_ms + took
        found[ninja_file.parent.name] = {"objects": len(targets), "objects_built": done,
                                         "longest_object_s": round(longest_ms / 1000, 1),
                                         "compile_cpu_s": round(total_ms / 1000, 1)}
    return found


def build(arch: str, timeout_s: float, workspace: Path) -> dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", BUILD_SNIPPET, arch], capture_output=True, text=True,
                              timeout=timeout_s)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        result = json.loads(lines[-1]) if lines else {"built": False, "error": done.stderr[-2000:]}
    except subprocess.TimeoutExpired:
        result = {"built": False, "error": f"the JIT build did not finish in {timeout_s:.0f} s"}
    result["wall_s"] = round(time.monotonic() - started, 1)
    result["ninja"] = ninja_progress(workspace)
    return result


def force_tactics(arch: str, dtype: str, tokens: int, hidden: int, intermediate: int, experts: int,
                  top_k: int) -> dict[str, Any]:
    import torch  # noqa: PLC0415
    from flashinfer.fused_moe import core  # noqa: PLC0415

    module = core.get_cutlass_fused_moe_module(arch)
    element = getattr(torch, DTYPES[dtype])
    known = dict(x_dtype=element, weight_dtype=element, output_dtype=torch.bfloat16, top_k=top_k, tp_size=1,
                 tp_rank=0, ep_size=1, ep_rank=0, cluster_size=1, cluster_rank=0, enable_alltoall=False,
                 use_deepseek_fp8_block_scale=False, use_w4_group_scaling=False, use_mxfp8_act_scaling=False,
                 min_latency_mode=False, enable_pdl=False, activation_type=core.ActivationType.Swiglu,
                 use_packed_weights=False, use_fused_finalize=True)
    import inspect  # noqa: PLC0415

    accepted = inspect.signature(module.MoERunner.__init__).parameters
    runner = module.MoERunner(**{k: v for k, v in known.items() if k in accepted})
    x = torch.randn(tokens, hidden, device="cuda").to(element)
    fc1 = (torch.randn(experts, 2 * intermediate, hidden, device="cuda") * 0.05).to(element)
    fc2 = (torch.randn(experts, hidden, intermediate, device="cuda") * 0.05).to(element)
    inputs = [x, fc1, None, fc2, None]
    inner = runner.fused_moe_runner
    first, second = int(inner.get_gemm1_tactic_count()), int(inner.get_gemm2_tactic_count())
    rows = []
    for gemm_idx, tactics in ((1, range(first)), (2, range(first, first + second))):
        for tactic in tactics:
            row: dict[str, Any] = {"gemm_idx": gemm_idx, "tactic": tactic}
            try:
                runner.forward(inputs, gemm_idx=gemm_idx, tactic=tactic, do_preparation=True)
                started = time.perf_counter()
                runner.forward(inputs, gemm_idx=gemm_idx, tactic=tactic)
                torch.cuda.synchronize()
                row.update(outcome="ok", time_s=round(time.perf_counter() - started, 6))
            except Exception as exc:  # noqa: BLE001 - the failure is the finding
                text = str(exc)
                row.update(outcome="failed", error=text.splitlines()[0][:400] if text else type(exc).__name__,
                           error_internal="Error Internal" in text,
                           unsupported=bool(re.search(r"Unsupported tile|not supported|FAST_BUILD", text)))
            rows.append(row)
    return {"tactic_counts": {"gemm1": first, "gemm2": second}, "rows": rows,
            "problem": {"tokens": tokens, "hidden": hidden, "intermediate": intermediate, "experts": experts,
                        "top_k": top_k, "dtype": dtype}}


def cross_check(predicted: dict[str, Any], forced: dict[str, Any]) -> dict[str, Any]:
    """Per tactic: the predicted SharedStorage and fit beside what the launch did."""
    by_tactic: dict[int, dict[str, Any]] = {}
    for row in predicted["rows"]:
        by_tactic.setdefault(row["tactic"], row)
    out, disagreements = [], []
    for row in forced["rows"]:
        guess = by_tactic.get(row["tactic"])
        expected = None if guess is None else {"fits": "ok", "exceeds": "failed", "unsupported": "failed"}[guess["verdict"]]
        agrees = expected == row["outcome"]
        entry = {**row, "predicted_verdict": guess and guess["verdict"], "tile": guess and guess["tile"],
                 "fusion": guess and guess["fusion"], "swap_ab": guess and guess["swap_ab"],
                 "predicted_smem_bytes": guess and guess.get("kernel_smem_bytes"), "agrees": agrees}
        out.append(entry)
        if not agrees:
            disagreements.append(entry)
    return {"tactics": len(out), "agree": len(out) - len(disagreements), "disagreements": disagreements, "rows": out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.device_check")
    parser.add_argument("--predicted", type=Path, required=True, help="static-smem result.json (same release/arch/dtype)")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--jit-timeout-s", type=float, default=420)
    parser.add_argument("--tokens", type=int, default=256)
    args = parser.parse_args(argv)
    predicted = json.loads(args.predicted.read_text())
    import torch  # noqa: PLC0415

    major, minor = torch.cuda.get_device_capability()
    arch = f"{major}{minor}"
    workspace = Path(os.environ.get("FLASHINFER_WORKSPACE_BASE", Path.home())) / ".cache" / "flashinfer"
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "capability": f"{major}.{minor}",
                              "torch": torch.__version__, "predicted_from": predicted.get("sources", {}).get("wheel"),
                              "flashinfer": predicted["flashinfer"], "dtype": predicted["dtype"],
                              "max_jobs": os.environ.get("MAX_JOBS")}
    result["jit"] = build(arch, args.jit_timeout_s, workspace)
    if result["jit"]["built"]:
        forced = force_tactics(arch, predicted["dtype"], args.tokens, hidden=6144, intermediate=2048, experts=32, top_k=8)
        result["forced"] = {k: v for k, v in forced.items() if k != "rows"}
        result["cross_check"] = cross_check(predicted, forced)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "device-check.json").write_text(json.dumps(result, indent=1) + "\n")
    summary = {k: result[k] for k in ("device", "flashinfer", "dtype")} | {"jit": {k: v for k, v in result["jit"].items()
                                                                                   if k != "error"}}
    if "cross_check" in result:
        summary["agree"] = f"{result['cross_check']['agree']}/{result['cross_check']['tactics']}"
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
