"""The triton-moe-configs kind's sections of the reports, drawn from its result model
(``reprokit/step_kinds/triton_moe_configs.py``)."""

from __future__ import annotations

from reprokit.draw.tables import Block, drawn_blocks
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.base import given
from reprokit.step_kinds.triton_moe_configs import (
    KIND,  # noqa: F401 - the kind these sections draw
    ArchBytes,
    Config,
    MoeConfigsResult,
)

CHANGES_SHOWN = 10


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


SECTIONS = (Section("findings", markdown=markdown, html=html, each_step=True),)
