"""Cross-check: for every configuration, the predicted fit against what the device did.

Pure functions over the sections the backends wrote, so every rule is tested
on CPU. Each comparison is an item ``{subject, check, predicted, observed,
agree}``; every item whose ``agree`` is False is copied to ``disagreements``,
and a prediction that this run could not observe (no such GPU here, backend
skipped, time budget spent) goes to ``unverified`` with the reason. Nothing
is dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reprokit.workloads.facts.tiles import FP4_BITS, tile_name
from reprokit.workloads.tile_sweep.classify import ERROR_INTERNAL_INIT, OUT_OF_RESOURCES

_TILE_KEYS = ("tile", "cta_tile", "tile_shape", "cta_shape", "name", "config")
_FITS_KEYS = ("fits", "fit", "fits_optin", "predicted_fit")


def _item(subject: str, check: str, predicted: Any, observed: Any, agree: bool, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "check": check, "predicted": predicted, "observed": observed, "agree": agree, **extra}


def _unverified(subject: str, check: str, predicted: Any, reason: str) -> dict[str, Any]:
    return {"subject": subject, "check": check, "predicted": predicted, "reason": reason}


def check_triton(configs: list[dict[str, Any]], native_arch: str, optin_bytes: int) -> tuple[list, list]:
    """Items and unverified predictions for the Triton configs on the present device."""
    items, unverified = [], []
    for entry in configs:
        subject = f"triton:{entry['id']}"
        predicted = entry.get("predicted_fits", {}).get(native_arch)
        compiled = entry.get("compiled", {}).get(native_arch, {})
        if predicted is None:
            reason = compiled.get("error") or "no native compile report"
            unverified.append(_unverified(subject, "fits", None, f"no prediction: {str(reason)[:300]}"))
            continue
        launch = entry.get("launch", {})
        outcome = launch.get("outcome")
        if outcome in (None, "not_attempted"):
            unverified.append(_unverified(subject, "fits", predicted, "never launched (time budget or lost context)"))
        else:
            observed = {"loaded": True, OUT_OF_RESOURCES: False}.get(outcome, f"failed: {outcome}")
            items.append(_item(subject, "fits", predicted, observed, observed is predicted,
                               basis=f"compiled {compiled.get('shared_bytes')} B vs opt-in {optin_bytes} B;"
                                     " observed: Triton loaded the kernel, or raised OutOfResources"))
            launched_bytes = launch.get("shared_bytes")
            if launched_bytes is None and outcome == OUT_OF_RESOURCES:
                required = launch.get("error", {}).get("fields", {}).get("required_bytes")  # facts.errors' field
                launched_bytes = int(required) if required is not None else None
            if launched_bytes is not None and compiled.get("shared_bytes") is not None:
                items.append(_item(subject, "shared_bytes", compiled["shared_bytes"], launched_bytes,
                                   compiled["shared_bytes"] == launched_bytes,
                                   basis="ahead-of-time compile vs the kernel the JIT launched"))
        driver = entry.get("driver_optin", {})
        if driver.get("ok") is None:
            reason = driver.get("error_name") or driver.get("error", {}).get("text") or "not asked"
            unverified.append(_unverified(subject, "driver_grants", predicted, f"driver not asked: {str(reason)[:300]}"))
        else:
            items.append(_item(subject, "driver_grants", predicted, driver["ok"], driver["ok"] is predicted,
                               basis=f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {driver.get('requested_bytes')})"
                                     f" -> {driver.get('error_name') or 'CUDA_SUCCESS'}"))
    return items, unverified


def cross_arch(configs: list[dict[str, Any]], arch: str) -> dict[str, Any]:
    """Which configs would not fit ``arch`` (compiled for it, not run), and which of those ran here."""
    section: dict[str, Any] = {"fits_there": [], "does_not_fit_there": [], "runs_here_but_not_there": [],
                               "no_prediction": []}
    for entry in configs:
        there = entry.get("predicted_fits", {}).get(arch)
        if there is None:
            section["no_prediction"].append(entry["id"])
        elif there:
            section["fits_there"].append(entry["id"])
        else:
            section["does_not_fit_there"].append(entry["id"])
            if entry.get("launch", {}).get("outcome") == "loaded":
                section["runs_here_but_not_there"].append(entry["id"])
    section["shared_bytes"] = {
        entry["id"]: entry.get("compiled", {}).get(arch, {}).get("shared_bytes") for entry in configs
    }
    return section


def check_boundary(boundary: dict[str, Any], optin_bytes: int | None) -> list[dict[str, Any]]:
    if boundary.get("status") != "ran":
        return []
    at, past = boundary["launch_at_optin_limit"], boundary["launch_past_optin_limit"]
    items = [
        _item("boundary:at-optin-limit", "launches", True, bool(at.get("ok")), bool(at.get("ok")),
              basis=f"{at.get('dynamic_shared_bytes')} B of dynamic shared memory"),
        _item("boundary:one-byte-past", "refused", True, not past.get("ok"), not past.get("ok"),
              basis=f"{past.get('dynamic_shared_bytes')} B -> {past.get('error_name') or 'launched'}"),
    ]
    if optin_bytes is not None:
        items.append(_item("boundary:optin-limit", "same_limit", optin_bytes, boundary.get("optin_bytes"),
                           optin_bytes == boundary.get("optin_bytes"),
                           basis="the limit the Triton predictions used vs the one the launches proved"))
    return items


def load_predicted(path: str | Path) -> dict[str, Any]:
    """A static-smem result: which CUTLASS tiles are predicted to fail (``failing_tiles``) or fit (``rows``).

    Tiles are in elements; an enum name (K in bytes) is read for NVFP4 activations, the kits' MoE type."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    failing, fitting = set(), set()
    for raw in data.get("failing_tiles") or []:
        tile = tile_name(raw if not isinstance(raw, dict) else next((raw[k] for k in _TILE_KEYS if k in raw), None),
                         FP4_BITS)
        if tile:
            failing.add(tile)
    for row in data.get("rows") or []:
        if not isinstance(row, dict):
            continue
        tile = tile_name(next((row[k] for k in _TILE_KEYS if k in row), None), FP4_BITS)
        fits = next((row[k] for k in _FITS_KEYS if k in row), None)
        if tile and fits is False:
            failing.add(tile)
        elif tile and fits is True:
            fitting.add(tile)
    arch = data.get("arch") or data.get("target_arch") or (data.get("device") or {}).get("gpu_arch")
    return {"path": str(path), "arch": arch, "failing_tiles": sorted(failing), "fitting_tiles": sorted(fitting - failing)}


def check_flashinfer(flashinfer: dict[str, Any], predicted: dict[str, Any] | None, native_arch: str | None) -> tuple[list, list]:
    """Static prediction of failing CUTLASS tiles vs the tactics that failed with Error Internal."""
    if not predicted:
        return [], []
    tiles = [(t, False) for t in predicted["failing_tiles"]] + [(t, True) for t in predicted["fitting_tiles"]]
    if flashinfer.get("status") != "ran":
        reason = f"flashinfer backend {flashinfer.get('status', 'absent')}: {flashinfer.get('reason', '')}"
        return [], [_unverified(f"flashinfer:{t}", "fits", fits, reason) for t, fits in tiles]
    if predicted.get("arch") and native_arch and predicted["arch"] != native_arch:
        reason = f"the prediction is for {predicted['arch']}, the device is {native_arch}"
        return [], [_unverified(f"flashinfer:{t}", "fits", fits, reason) for t, fits in tiles]
    failed_tiles: dict[str, int] = {}
    unnamed = 0
    for row in flashinfer.get("rows", []):
        if row.get("outcome") == "failed" and (row.get("error") or {}).get("class") == ERROR_INTERNAL_INIT:
            if row.get("tile"):
                failed_tiles[row["tile"]] = failed_tiles.get(row["tile"], 0) + 1
            else:
                unnamed += 1
    items, unverified = [], []
    for tile, fits in tiles:
        observed = tile not in failed_tiles
        items.append(_item(f"flashinfer:{tile}", "fits", fits, observed, observed is fits,
                           basis=f"{failed_tiles.get(tile, 0)} tactics with this tile failed with Error Internal"))
    known = {t for t, _ in tiles}
    for tile, count in sorted(failed_tiles.items()):
        if tile not in known:
            items.append(_item(f"flashinfer:{tile}", "fits", None, False, False,
                               basis=f"{count} tactics failed with Error Internal; the prediction does not name this tile"))
    if unnamed:
        unverified.append(_unverified("flashinfer:?", "fits", None,
                                      f"{unnamed} tactics failed with Error Internal without naming their tile"))
    return items, unverified


def cross_check(*, native_arch: str | None, optin_bytes: int | None, triton: dict[str, Any],
                boundary: dict[str, Any], flashinfer: dict[str, Any], predicted: dict[str, Any] | None,
                cross_arches: tuple[str, ...]) -> dict[str, Any]:
    items, unverified = [], []
    if triton.get("configs") and native_arch and triton.get("status") == "ran":
        got, missing = check_triton(triton["configs"], native_arch, optin_bytes)
        items += got
        unverified += missing
    items += check_boundary(boundary, optin_bytes)
    got, missing = check_flashinfer(flashinfer, predicted, native_arch)
    items += got
    unverified += missing
    arches = {}
    for arch in cross_arches:
        if arch == native_arch or not triton.get("configs"):
            continue
        arches[arch] = cross_arch(triton["configs"], arch)
        for config_id in arches[arch]["fits_there"] + arches[arch]["does_not_fit_there"]:
            unverified.append(_unverified(f"triton:{config_id}", f"fits_{arch}", config_id in arches[arch]["fits_there"],
                                          f"compiled for {arch} only: no {arch} device in this run"))
    return {
        "checked": len(items),
        "agreements": sum(1 for i in items if i["agree"]),
        "disagreements": [i for i in items if not i["agree"]],
        "unverified": unverified,
        "cross_arch": arches,
        "predicted_static": predicted,
        "items": items,
    }
