"""``triton-moe-configs``: sglang's default and tuned Triton fused-MoE configurations sized per arch, by the
pipeliner's formula and by a Triton compile; the tuned files refit to SM120.

Its section: the defaults per arch next to each arch's limit, the tuned files that overflow, where the formula
matches the compile, and the files rewritten for SM120; one section per step.
"""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.step_kinds.base import Part, PinParam, ReportStep, Result, Section, StepInput, StepKind, given

CHANGES_SHOWN = 10


class Config(Part):
    """A Triton fused-MoE configuration (the names are Triton's)."""

    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    num_warps: int | None = None
    num_stages: int | None = None


class ArchBytes(Part):
    """A configuration's shared memory on one arch: compiled, by the formula, and whether it fits."""

    compiled_bytes: int | None = None
    predicted_bytes: int | None = None
    fits: bool | None = None


class Default(Part):
    """One branch of ``get_default_config``: when it applies, the configuration, its size per arch."""

    when: str
    config: Config
    by_arch: dict[str, ArchBytes]


class Tuned(Part):
    files: int
    config_dirs: list[str]
    configs: int
    configs_overflowing: dict[str, int]
    files_overflowing: dict[str, int]


class FormulaCheck(Part):
    """The pipeliner's formula against the compile, on one arch (distinct configurations)."""

    compared: int
    exact: int
    fit_verdict_differs: int


class ChangedConfig(Part):
    file: str
    batch: str
    from_: Config = pydantic.Field(alias="from")
    to: Config
    from_bytes: int
    to_bytes: int


class Emitted(Part):
    """The tuned files rewritten for one arch."""

    arch: str | None = None
    device_name: str | None = None
    from_device: str | None = None
    files: list[Any] | None = None
    changed_count: int = 0
    changed_configs: list[ChangedConfig] = []


class MoeConfigsResult(Result):
    sglang: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    triton: str | None = None
    compiled: bool | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    defaults: list[Default] | None = None
    defaults_overflowing: dict[str, Any] | None = None
    tuned: Tuned | None = None
    formula: dict[str, FormulaCheck] | None = None  # by arch
    emitted: Emitted | None = None
    emitted_all_fit: bool | None = None


def _bytes(size: ArchBytes) -> str:
    compiled, predicted = size.compiled_bytes, size.predicted_bytes
    verdict = {True: "fits", False: "OVERFLOWS", None: "not sized"}[size.fits]
    if compiled is not None:
        return f"{compiled} ({verdict}; formula {predicted})"
    return f"{predicted} ({verdict}, formula)" if predicted is not None else verdict


def _config(config: Config) -> str:
    return f"{config.BLOCK_SIZE_M}x{config.BLOCK_SIZE_N}x{config.BLOCK_SIZE_K} s{given(config.num_stages, '-')}"


def _emitted(result: MoeConfigsResult) -> list[Block]:
    emitted = result.emitted
    if emitted is None or not emitted.files:
        return []
    out: list[Block] = [
        f"Rewritten for {emitted.arch} ({emitted.device_name}, from {emitted.from_device}):"
        f" {len(emitted.files)} files, {emitted.changed_count} configurations changed,"
        f" all fit: {result.emitted_all_fit}.",
        (["file", "M", "from", "to", "bytes"],
         [[c.file, c.batch, _config(c.from_), _config(c.to), f"{c.from_bytes} -> {c.to_bytes}"]
          for c in emitted.changed_configs[:CHANGES_SHOWN]])]
    if emitted.changed_count > CHANGES_SHOWN:
        out.append(f"... and {emitted.changed_count - CHANGES_SHOWN} more (the step's result.json).")
    return out


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    """The section of one step: a title, then paragraphs and tables; none for a result without defaults."""
    result: MoeConfigsResult = step.result
    if not result.defaults:
        return None
    archs, limits = result.archs or [], result.limits_bytes or {}
    how = f"compiled with Triton {result.triton}" if result.compiled else "the pipeliner's formula, not compiled"
    title = f"Triton fused-MoE configurations of sglang {result.sglang} ({how}; step {step.name})"
    out: list[Block] = ["Limits: " + ", ".join(f"{a} {limits[a]} B" for a in archs) + "."]
    out.append((["default (get_default_config)", "BLOCK MxNxK, warps, stages", *archs],
                [[d.when, f"{d.config.BLOCK_SIZE_M}x{d.config.BLOCK_SIZE_N}x{d.config.BLOCK_SIZE_K}"
                  + f", {given(d.config.num_warps, '-')}, {given(d.config.num_stages, '-')}",
                  *[_bytes(d.by_arch[a]) for a in archs]] for d in result.defaults]))
    tuned = result.tuned
    if tuned is not None:
        out.append(
            f"Tuned files read: {tuned.files} ({', '.join(tuned.config_dirs)}), {tuned.configs} configurations;"
            " overflowing: " + "; ".join(f"{a} {tuned.configs_overflowing[a]} configurations in"
                                         f" {tuned.files_overflowing[a]} files" for a in archs) + ".")
    if result.formula:
        out.append("The formula against the compile (distinct configurations):")
        out.append((["arch", "compared", "exact", "fit verdict differs"],
                    [[a, f.compared, f.exact, f.fit_verdict_differs] for a, f in result.formula.items()]))
    return title, out + _emitted(result)


markdown, html = drawn_blocks(blocks)


KIND = StepKind(
    name="triton-moe-configs",
    where="host",
    order=40,
    module="reprokit.workloads.triton_moe",
    summary="sglang's default and tuned Triton fused-MoE configurations sized per arch (formula and Triton"
            " compile); the tuned files refit to SM120",
    needs_pins=("sglang",),
    implemented=True,
    default_timeout_s=1800,
    param_keys=("sglang", "archs", "config_dirs", "compile", "from_device", "device_name", "hidden_size",
                "top_k", "jobs", "emit_arch"),
    inputs=(StepInput("wheel", "the pinned sglang wheel", from_control="sglang-wheel"),),
    pin_params=(PinParam("sglang", pin="sglang"),),
    result=MoeConfigsResult,
    sections=(Section("findings", markdown=markdown, html=html, each_step=True),),
)
