"""From probe records to the result: one row per tactic and output type, verdicts, explanations.

A kernel fails to initialise when ``GemmKernel::SharedStorageSize`` is larger
than the device grants one block (``GemmUniversalAdapter::initialize`` ->
``cudaFuncSetAttribute(MaxDynamicSharedMemorySize)`` -> ``kErrorInternal``).
Exactly the limit fits. The verdict is taken twice: against CUTLASS's own
capacity constant for the arch (what its builders size stages against) and,
when given, against the opt-in limit a real device reported.
"""

from __future__ import annotations

import re
from typing import Any

from reprokit.workloads.facts.smem_fit import KernelFit, fit
from reprokit.workloads.facts.tiles import from_enum_value, parse_tile
from reprokit.workloads.static_smem.targets import GEMM_OPS

FITS, EXCEEDS, UNSUPPORTED = KernelFit.FITS, KernelFit.EXCEEDS, KernelFit.UNSUPPORTED
# CUTLASS's kernels take all their shared memory dynamically: device_kernel<Operator> declares only
# 'extern __shared__ char smem[]' and places the kernel's SharedStorage there (include/cutlass/device_kernel.h)
CUTLASS_STATIC_SMEM_BYTES = 0


def tactic_entries(tactic_records: list[dict[str, Any]], act_bits: int, arch: str) -> list[dict[str, Any]]:
    """The tactic -> tile mapping of one output type (they are all equal), in the data file's schema."""
    entries = []
    for record in tactic_records:
        if record.get("is_tma_warp_specialized") is False:
            continue  # an SM80-style kernel (no TMA warp-specialized SharedStorage): see non_tma_tactics
        tile_enum = from_enum_value(int(record["tile_enum_value"]))
        launcher = record.get("launcher") or {}
        entry = {
            "op": GEMM_OPS[int(record["gemm"])],
            "tactic": int(record["tactic"]),
            "tile": tile_enum.tile(act_bits),
            "tile_enum": tile_enum.name,
            "fusion": record["fusion"],
            "swap_ab": bool(record["swap_ab"]),
            "index_in_op": int(record["index_in_op"]),
            "tile_enum_value": tile_enum.value,
            "dispatched_tile": launcher.get("TileShape"),
            "dispatched_cluster": launcher.get("ClusterShape"),
            "epilogue_schedule": launcher.get("EpilogueSchedule"),
            "dynamic_cga": launcher.get("DYNAMIC_CGA"),
            "dispatch_error": first_line(record["dispatch_error"]) if record.get("dispatch_error") else None,
        }
        if launcher and entry["dispatched_tile"] != entry["tile"]:
            raise ValueError(f"{arch} tactic {entry['tactic']} ({tile_enum.name}): the dispatcher chose tile "
                             f"{entry['dispatched_tile']}, the K-bytes conversion gives {entry['tile']}")
        entries.append(entry)
    return entries


def non_tma_tactics(tactic_records: list[dict[str, Any]]) -> list[int]:
    """Tactics the runner offers that are not TMA warp-specialized (SM80-style kernels): not analysed here."""
    return [int(r["tactic"]) for r in tactic_records if r.get("is_tma_warp_specialized") is False]


def first_line(text: str) -> str:
    """The message of a TensorRT-LLM exception: no backtrace, no machine-specific directory."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return re.sub(r"\((?:[^()\s]*/)?([^/()\s]+:\d+)\)", r"(\1)", line)


def explain(kernel: dict[str, Any], capacity_bytes: int) -> str:
    """Why the kernel fits or not: the builder's stage arithmetic versus the real struct."""
    total = kernel["kernel_smem_bytes"]
    parts = []
    if "stage_bytes" in kernel:
        kernel_carveout = kernel.get("builder_kernel_carveout_bytes", 0)
        stages, stage_bytes, carveout = kernel["stages_recomputed"], kernel["stage_bytes"], kernel["carveout_bytes"]
        reserved = f"{kernel['capacity_bytes']}{f' - {kernel_carveout} kernel carveout' if kernel_carveout else ''}"
        planned = stages * stage_bytes + carveout + kernel_carveout
        parts.append(
            f"builder: ({reserved} - {carveout} epilogue carveout) // {stage_bytes} B/stage = {stages} stages, "
            f"planning {stages} x {stage_bytes} + {carveout}{f' + {kernel_carveout}' if kernel_carveout else ''} "
            f"= {planned} B")
    members = [(name, kernel.get(f"kernel_{name}_bytes"))
               for name in ("tensors", "pipelines", "scheduler_response", "tensormaps")]
    members = [(name, size) for name, size in members if size is not None]
    if members:
        summed = sum(size for _, size in members)
        detail = " + ".join(f"{name.replace('_', ' ')} {size}" for name, size in members)
        padding = total - summed
        pad_text = f" + {padding} padding to {kernel['kernel_smem_alignment']}-B alignment" if padding else ""
        parts.append(f"real SharedStorage = {detail}{pad_text} = {total} B")
    else:
        parts.append(f"real SharedStorage = {total} B")
    delta = total - capacity_bytes
    parts.append(f"{delta} B over {capacity_bytes}" if delta > 0 else f"{-delta} B spare under {capacity_bytes}")
    return "; ".join(parts)


def build_rows(entries_by_output: dict[str, list[dict[str, Any]]], kernels: dict[str, dict[str, Any]],
               key_of: Any, capacity_bytes: int, optin_limit_bytes: int | None) -> list[dict[str, Any]]:
    """One row per (selected tactic, output type); ``key_of(entry, output)`` names its kernel record."""
    rows = []
    for output, entries in entries_by_output.items():
        for entry in entries:
            row = {k: entry[k] for k in ("op", "tactic", "tile", "tile_enum", "fusion", "swap_ab")}
            row["output_dtype"] = output
            if entry["dispatch_error"]:
                row.update(verdict=UNSUPPORTED, verdict_optin=None, explanation=entry["dispatch_error"])
                rows.append(row)
                continue
            key = key_of(entry, output)
            kernel = kernels[key]
            sized = fit(kernel["kernel_smem_bytes"], CUTLASS_STATIC_SMEM_BYTES, capacity_bytes)
            optin = None if optin_limit_bytes is None else fit(sized.dynamic_bytes, sized.static_bytes, optin_limit_bytes)
            row.update(
                variant=key,
                stages=kernel["stages"],
                mainloop_smem_bytes=kernel["mainloop_smem_bytes"],
                epilogue_smem_bytes=kernel["epilogue_smem_bytes"],
                kernel_smem_bytes=kernel["kernel_smem_bytes"],
                static_smem_bytes=sized.static_bytes,
                total_smem_bytes=sized.total_bytes,
                capacity_bytes=kernel["capacity_bytes"],
                capacity_symbol=kernel["capacity_symbol"],
                verdict=FITS if sized.fits else EXCEEDS,
                over_capacity_bytes=sized.over_bytes,
                optin_limit_bytes=optin_limit_bytes,
                verdict_optin=None if optin is None else FITS if optin.fits else EXCEEDS,
                explanation=explain(kernel, capacity_bytes),
                kernel=kernel,
            )
            rows.append(row)
    return rows


def tile_verdicts(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """failing: any analysed variant of the tile exceeds the capacity; fitting: all analysed variants fit."""
    analysed: dict[str, list[str]] = {}
    unsupported = set()
    for row in rows:
        if row["verdict"] == UNSUPPORTED:
            unsupported.add(row["tile"])
        else:
            analysed.setdefault(row["tile"], []).append(row["verdict"])
    failing = sorted((t for t, v in analysed.items() if EXCEEDS in v), key=parse_tile)
    fitting = sorted((t for t, v in analysed.items() if EXCEEDS not in v), key=parse_tile)
    return {"failing_tiles": failing, "fitting_tiles": fitting,
            "unsupported_tiles": sorted(unsupported - set(analysed), key=parse_tile)}


def failing_tactics(rows: list[dict[str, Any]], verdict_key: str = "verdict") -> dict[str, list[int]]:
    found: dict[str, set[int]] = {op: set() for op in GEMM_OPS.values()}
    for row in rows:
        if row.get(verdict_key) == EXCEEDS:
            found[row["op"]].add(row["tactic"])
    return {op: sorted(tactics) for op, tactics in found.items()}
