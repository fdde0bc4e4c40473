"""Boundary backend: a raw kernel launch with dynamic shared memory at the probed opt-in limit and one byte past it.

It reuses the SMEM probe's driver calls (one source of truth for the launch);
here the two launches are the sweep's fixed points: every tile that needs at
most the limit must be grantable, and nothing past it.
"""

from __future__ import annotations

from typing import Any

from reprokit.workloads.contract import WorkloadError, progress
from reprokit.workloads.tile_sweep.context import SweepContext

NAME = "boundary"


def unavailable(ctx: SweepContext) -> str | None:
    if not ctx.has_gpu:
        return "no CUDA device"
    return None


def _row(case: str, launch: dict[str, Any]) -> dict[str, Any]:
    ok = bool(launch.get("ok"))
    return {
        "backend": NAME, "config": case, "problem": "raw-launch", "outcome": "ok" if ok else "failed",
        "dynamic_shared_bytes": launch.get("dynamic_shared_bytes"),
        "error": None if ok else {"class": "cuda_error", "name": launch.get("error_name"),
                                  "text": launch.get("error_string") or launch.get("error_name"),
                                  "set_attribute_error_name": launch.get("set_attribute_error_name")},
    }


def run(ctx: SweepContext) -> dict[str, Any]:
    from reprokit.workloads import smem_probe  # noqa: PLC0415

    index = ctx.device["index"]
    try:
        drv, _count = smem_probe.init_driver()
        limit = smem_probe.query_device(drv, index)["max_shared_memory_per_block_optin_bytes"]
        at_limit = smem_probe.launch_with_smem(drv, index, limit)
        past_limit = smem_probe.launch_with_smem(drv, index, limit + 1)
    except WorkloadError as exc:
        return {"status": "failed", "reason": str(exc), "rows": []}
    progress(f"sweep[boundary]: {limit} B: {'ok' if at_limit.get('ok') else at_limit.get('error_name')};"
             f" {limit + 1} B: {'ok' if past_limit.get('ok') else past_limit.get('error_name')}")
    return {
        "status": "ran",
        "optin_bytes": limit,
        "launch_at_optin_limit": at_limit,
        "launch_past_optin_limit": past_limit,
        "rows": [_row("at-optin-limit", at_limit), _row("one-byte-past", past_limit)],
    }
