"""``triton-moe-configs``: sglang's default and tuned Triton fused-MoE configurations sized per arch, by the
pipeliner's formula and by a Triton compile; the tuned files refit to SM120.

Its section: the defaults per arch next to each arch's limit, the tuned files that overflow, where the formula
matches the compile, and the files rewritten for SM120; one section per step.
"""

from __future__ import annotations

from typing import Any

from reprokit.report.tables import Block, html_blocks, md_blocks
from reprokit.step_kinds.base import PinParam, ReportStep, Result, Section, StepInput, StepKind

CHANGES_SHOWN = 10


def _bytes(row: dict[str, Any]) -> str:
    compiled, predicted = row.get("compiled_bytes"), row.get("predicted_bytes")
    verdict = {True: "fits", False: "OVERFLOWS", None: "not sized"}[row.get("fits")]
    if compiled is not None:
        return f"{compiled} ({verdict}; formula {predicted})"
    return f"{predicted} ({verdict}, formula)" if predicted is not None else verdict


def _config(config: dict[str, int]) -> str:
    return "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**config) + f" s{config.get('num_stages', '-')}"


def _emitted(result: dict[str, Any]) -> list[Block]:
    emitted = result.get("emitted") or {}
    if not emitted.get("files"):
        return []
    out: list[Block] = [
        f"Rewritten for {emitted['arch']} ({emitted['device_name']}, from {emitted['from_device']}):"
        f" {len(emitted['files'])} files, {emitted['changed_count']} configurations changed,"
        f" all fit: {result.get('emitted_all_fit')}.",
        (["file", "M", "from", "to", "bytes"],
         [[c["file"], c["batch"], _config(c["from"]), _config(c["to"]), f"{c['from_bytes']} -> {c['to_bytes']}"]
          for c in emitted["changed_configs"][:CHANGES_SHOWN]])]
    if emitted["changed_count"] > CHANGES_SHOWN:
        out.append(f"... and {emitted['changed_count'] - CHANGES_SHOWN} more (the step's result.json).")
    return out


def blocks(step: ReportStep) -> tuple[str, list[Block]] | None:
    """The section of one step: a title, then paragraphs and tables; none for a result without defaults."""
    result = step.result
    if not result.get("defaults"):
        return None
    archs = result["archs"]
    how = f"compiled with Triton {result['triton']}" if result.get("compiled") else "the pipeliner's formula, not compiled"
    title = f"Triton fused-MoE configurations of sglang {result.get('sglang')} ({how}; step {step.name})"
    out: list[Block] = ["Limits: " + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs) + "."]
    out.append((["default (get_default_config)", "BLOCK MxNxK, warps, stages", *archs],
                [[d["when"], "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**d["config"])
                  + f", {d['config'].get('num_warps', '-')}, {d['config'].get('num_stages', '-')}",
                  *[_bytes(d["by_arch"][a]) for a in archs]] for d in result["defaults"]]))
    tuned = result["tuned"]
    out.append(
        f"Tuned files read: {tuned['files']} ({', '.join(tuned['config_dirs'])}), {tuned['configs']} configurations;"
        " overflowing: " + "; ".join(f"{a} {tuned['configs_overflowing'][a]} configurations in"
                                     f" {tuned['files_overflowing'][a]} files" for a in archs) + ".")
    if result.get("formula"):
        out.append("The formula against the compile (distinct configurations):")
        out.append((["arch", "compared", "exact", "fit verdict differs"],
                    [[a, f["compared"], f["exact"], f["fit_verdict_differs"]] for a, f in result["formula"].items()]))
    return title, out + _emitted(result)


def markdown(step: ReportStep) -> list[str]:
    section = blocks(step)
    return md_blocks(*section) if section else []


def html(step: ReportStep) -> list[str]:
    section = blocks(step)
    return html_blocks(*section) if section else []


class MoeConfigsResult(Result):
    sglang: str | None = None
    wheel: str | None = None
    wheel_sha256: str | None = None
    triton: str | None = None
    compiled: bool | None = None
    archs: list[str] | None = None
    limits_bytes: dict[str, int] | None = None
    defaults: list[dict[str, Any]] | None = None
    defaults_overflowing: dict[str, Any] | None = None
    tuned: dict[str, Any] | None = None
    formula: dict[str, Any] | None = None
    emitted: dict[str, Any] | None = None
    emitted_all_fit: bool | None = None


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
