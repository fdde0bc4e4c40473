"""The device check's records (``device-check.json``, the autotuner's DEBUG logs) as the evidence's tables.

Per tactic: predicted SharedStorage and fit beside the bytes the launch asked for and whether it launched; each
difference gets its reason. Per autotuner pass: which tactics were profiled, and whether the blocked ones were.

    python -m reprokit.workloads.static_smem.device_table RUN_DIR [--blocklist tactics-blocklist.json] > table.md

Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reprokit.workloads.facts.smem_fit import KernelFit
from reprokit.workloads.static_smem.device_check import profiled_tactics

# Why a tactic has no static prediction: the analysis models SM90 TMA warp-specialized SharedStorage only.
SM80_REASON = ("SM80-style kernel (no TMA warp-specialized SharedStorage to model): {kernels}; launched on the "
               "H200, well under its 232448 B opt-in limit")


def _kernels(row: dict[str, Any]) -> str:
    names = {e["name"].split("I", 1)[0] for e in row.get("launches", [])}
    return ", ".join(sorted("fused_moe::run_global" if n.startswith("_ZN9fused_moe") else "cutlass::Kernel<MoeFCGemm>"
                            if n.startswith("_ZN7cutlass6Kernel") else "cutlass::device_kernel<GemmUniversal>"
                            for n in names)) or "no GEMM launch traced"


def _launched_bytes(row: dict[str, Any]) -> list[int]:
    return sorted({e["shared_mem_bytes"] for e in row.get("launches", [])})


def tactic_rows(check: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per tactic, the launch's own bytes (cuLaunchKernel sharedMemBytes) beside the prediction."""
    traced = {row["tactic"]: row for row in check["tactics"]["rows"]}
    out = []
    for entry in check["cross_check"]["rows"]:
        row = traced[entry["tactic"]]
        launched_bytes = _launched_bytes(row)
        predicted = entry.get("predicted_smem_bytes")
        if predicted is None:
            why = SM80_REASON.format(kernels=_kernels(row))
        elif launched_bytes == [predicted] and entry["launched"] and entry.get("predicted_verdict") == KernelFit.FITS:
            why = "agrees"
        else:
            why = f"differs: predicted {predicted} B, launched with {launched_bytes}"
        out.append({"gemm": entry["gemm_idx"], "tactic": entry["tactic"], "tile": entry.get("tile") or "-",
                    "predicted_bytes": predicted, "predicted_fit": entry.get("predicted_verdict"),
                    "launch_bytes": launched_bytes, "launched": entry["launched"], "outcome": why})
    return out


def autotune_rows(logs: dict[str, str], blocked: list[int]) -> list[dict[str, Any]]:
    """Per pass: tactics profiled (gemm1 / gemm2) and which of the blocked ones were."""
    out = []
    for name, text in logs.items():
        read = profiled_tactics(text)
        prof = set(read["profiled"])
        out.append({"pass": name, "profiled": len(prof), "profile_lines": read["profile_lines"],
                    "gemm1": sum(t < 45 for t in prof), "gemm2": sum(t >= 45 for t in prof),
                    "blocked_profiled": sorted(prof & set(blocked)), "failed": read["failed_while_profiling"]})
    return out


def markdown(tactics: list[dict[str, Any]], passes: list[dict[str, Any]]) -> str:
    lines = ["| gemm | tactic | tile | predicted B | predicted fit | launch sharedMemBytes | launched | outcome |",
             "|---|---|---|---|---|---|---|---|"]
    for r in tactics:
        launch = ", ".join(str(b) for b in r["launch_bytes"]) or "-"
        lines.append(f"| {r['gemm']} | {r['tactic']} | {r['tile']} | {r['predicted_bytes'] or '-'} | "
                     f"{r['predicted_fit'] or '-'} | {launch} | {'yes' if r['launched'] else 'NO'} | {r['outcome']} |")
    lines += ["", "| autotuner pass | tactics profiled | gemm1 | gemm2 | profile lines | blocked tactics profiled |",
              "|---|---|---|---|---|---|"]
    for p in passes:
        lines.append(f"| {p['pass']} | {p['profiled']} | {p['gemm1']} | {p['gemm2']} | {p['profile_lines']} | "
                     f"{', '.join(map(str, p['blocked_profiled'])) or 'none'} |")
    return "\n".join(lines) + "\n"


def blocked_tactics(path: Path) -> list[int]:
    data = json.loads(path.read_text())
    return sorted(t for tactics in data["invalid_tactics"].values() for t in tactics)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.device_table")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--blocklist", type=Path)
    args = parser.parse_args(argv)
    check_file = args.run_dir / "device-check.json"
    try:
        check = json.loads(check_file.read_text())
        tactics = tactic_rows(check)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{check_file}: not a device-check record with a cross_check ({exc}); run device_check with --predicted",
              file=sys.stderr)
        return 2
    logs = {p.stem: p.read_text(errors="replace") for p in sorted(args.run_dir.glob("autotune-*.log"))}
    print(markdown(tactics, autotune_rows(logs, blocked_tactics(args.blocklist) if args.blocklist else [])), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
