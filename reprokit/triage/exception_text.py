"""Read what an exception's text says about the failure: which MoE tile, which CUTLASS status.

The text is a record's message plus its continuation lines: a Python traceback, or the
``{e}`` of FlashInfer's "Skipping tactic" line, which for the CUTLASS MoE GEMM is a
TensorRT-LLM exception with its C++ backtrace. The tile is read, best first, from the
``dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized<..., cute::tuple<cute::C<M>, ...>>``
frame (elements), from an 'Unsupported tile (M, N, K) and cluster ...' message (elements),
or from an 'Unsupported tile shape config <number>' message, whose K is in bytes and
needs the activation type of a dispatch frame to become elements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.triage.formats import (
    EPILOGUE_FUSION_NAMES,
    ERROR_PATTERNS,
    MOE_GEMM_OP_OF_STAGE,
    PATTERNS_BY_KIND,
)
from reprokit.workloads.facts.tiles import ELEMENT_BITS, from_enum_value, tile_name

_FINAL_EXCEPTION = re.compile(
    r"^((?:[A-Za-z_][A-Za-z0-9_.]*)?(?:Error|Exception|Exit|Interrupt|OutOfResources))(?:: (.*))?$", re.MULTILINE
)
_CHAIN_SEPARATORS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_CAUSE_PATTERNS = tuple(p for p in ERROR_PATTERNS if p.kind != "python_traceback")
_SUMMARY_CHARS = 300


@dataclass(frozen=True)
class ExceptionFacts:
    """What one exception text says; every field is None when the text does not say it."""

    cause: str | None  # kind of the error pattern found (fatal ones first, then table order)
    cause_severity: str | None
    launcher_error: str | None  # e.g. 'Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal'
    status: str | None  # the CUTLASS status string, e.g. 'Error Internal'
    dispatch_error: str | None  # e.g. 'Unsupported tile shape config 128128256 for MoE gemm'
    instantiation_file: str | None
    instantiation_arch: str | None  # e.g. 'sm120'
    instantiation_cta_m: int | None
    tile: str | None  # 'MxNxK' in elements
    tile_enum: str | None  # CutlassTileConfigSM120 name, e.g. 'CtaShape128x128x256B' (K in bytes)
    fusion: str | None  # EpilogueFusion name, e.g. 'NONE', 'FINALIZE'
    swap_ab: bool | None
    op: str | None  # 'trtllm::fused_moe::gemm1' / 'gemm2', from a CutlassMoeFCRunner::gemmN frame
    final_exception: str | None  # the last 'SomeError: message' line of a Python traceback
    chained: int  # chained-exception separators in the text
    summary: str  # one line for a table


def _find(kind: str, text: str) -> dict[str, str | None] | None:
    return PATTERNS_BY_KIND[kind].find(text)


def _tile_from_config(config: int, dtype: str | None) -> tuple[str | None, str | None]:
    """(enum name, tile in elements or None): the config is the enum's value, K in bytes (facts.tiles)."""
    try:
        enum = from_enum_value(config)
    except ValueError:
        return None, None
    return enum.name, tile_name(config, ELEMENT_BITS.get(dtype or ""))


def _cause(text: str) -> tuple[str | None, str | None]:
    found = [p for p in _CAUSE_PATTERNS if p.compiled.search(text)]
    if not found:
        return None, None
    best = next((p for p in found if p.severity == "fatal"), found[0])
    return best.kind, best.severity


def analyse(text: str) -> ExceptionFacts:
    """Facts from one record's text; never raises."""
    cause, cause_severity = _cause(text)
    launcher_error = status = None
    for kind, what in (
        ("moe_gemm_init_failed", "Failed to initialize cutlass TMA WS grouped gemm"),
        ("moe_gemm_run_failed", "Failed to run cutlass TMA WS grouped gemm"),
        ("moe_gemm_will_fail", "Grouped GEMM kernel will fail for params"),
    ):
        found = _find(kind, text)
        if found:
            status = found["status"]
            launcher_error = f"{what}. Error: {status}"
            break
    if launcher_error is None and (found := _find("moe_gemm_workspace", text)):
        launcher_error = (
            f"Workspace is size {found['required_bytes']} but only {found['allocated_bytes']} were allocated"
        )

    dispatch_error = tile = tile_enum = fusion = None
    swap_ab: bool | None = None
    frame = _find("moe_dispatch_frame", text)
    tile_frame = _find("moe_tile_dispatch_frame", text)
    dtype = (frame or tile_frame or {}).get("dtype")
    fusion_value = (frame or tile_frame or {}).get("fusion")
    if fusion_value is not None:
        fusion = EPILOGUE_FUSION_NAMES.get(int(fusion_value), f"EpilogueFusion({fusion_value})")
    if frame:
        tile = f"{frame['tile_m']}x{frame['tile_n']}x{frame['tile_k']}"
        swap_ab = None if frame["swap_ab"] is None else frame["swap_ab"] == "true"
    if found := _find("moe_unsupported_tile_cluster", text):
        dispatch_error = (
            f"Unsupported tile ({found['tile_m']}, {found['tile_n']}, {found['tile_k']}) and cluster "
            f"({found['cluster_m']}, {found['cluster_n']}, {found['cluster_k']}) shape combination "
            f"for arch {found['arch']}"
        )
        tile = tile or f"{found['tile_m']}x{found['tile_n']}x{found['tile_k']}"
    elif found := _find("moe_unsupported_tile_config", text):
        config = int(found["config"] or 0)
        dispatch_error = f"Unsupported tile shape config {config} for MoE gemm"
        tile_enum, config_tile = _tile_from_config(config, dtype)
        tile = tile or config_tile
    elif found := _find("moe_unsupported_cluster_config", text):
        dispatch_error = f"Unsupported cluster shape config {found['config']} for MoE gemm"
    elif _find("moe_gemm_config_undefined", text):
        dispatch_error = "GEMM config undefined."

    instantiation = PATTERNS_BY_KIND["moe_instantiation_file"].compiled.search(text)
    stage = _find("moe_gemm_stage_frame", text)
    finals = _FINAL_EXCEPTION.findall(text)
    final_exception = f"{finals[-1][0]}: {finals[-1][1]}".rstrip(": ") if finals else None
    first_line = text.split("\n", 1)[0]
    summary = launcher_error or dispatch_error or final_exception or first_line
    return ExceptionFacts(
        cause=cause,
        cause_severity=cause_severity,
        launcher_error=launcher_error,
        status=status,
        dispatch_error=dispatch_error,
        instantiation_file=instantiation.group(0) if instantiation else None,
        instantiation_arch=f"sm{instantiation.group(1)}" if instantiation else None,
        instantiation_cta_m=int(instantiation.group(2)) if instantiation else None,
        tile=tile,
        tile_enum=tile_enum,
        fusion=fusion,
        swap_ab=swap_ab,
        op=MOE_GEMM_OP_OF_STAGE.get(stage["stage"] or "") if stage else None,
        final_exception=final_exception,
        chained=sum(text.count(separator) for separator in _CHAIN_SEPARATORS),
        summary=summary[:_SUMMARY_CHARS],
    )
