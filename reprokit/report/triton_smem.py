"""The report sections of the Triton shared-memory steps: bytes per arch next to each arch's limit.

``triton-moe-configs``: sglang's defaults, the tuned files that overflow, where the pipeliner's formula
matches the compile, and the files rewritten for SM120. ``triton-smem``: one row per case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Table = Callable[[list[str], list[list[Any]]], list[str]]
CHANGES_SHOWN = 10


def _bytes(row: dict[str, Any]) -> str:
    compiled, predicted = row.get("compiled_bytes"), row.get("predicted_bytes")
    verdict = {True: "fits", False: "**overflows**", None: "not sized"}[row.get("fits")]
    if compiled is not None:
        return f"{compiled} ({verdict}; formula {predicted})"
    return f"{predicted} ({verdict}, formula)" if predicted is not None else verdict


def moe_markdown(result: dict[str, Any] | None, table: Table) -> list[str]:
    if not result or not result.get("defaults"):
        return []
    archs = result["archs"]
    how = f"compiled with Triton {result['triton']}" if result.get("compiled") else "the pipeliner's formula, not compiled"
    lines = ["", f"## Triton fused-MoE configurations of sglang {result.get('sglang')} ({how})", "",
             "Limits: " + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs) + ".", ""]
    lines += table(["default (get_default_config)", "BLOCK MxNxK, warps, stages", *archs],
                   [[d["when"], "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**d["config"])
                     + f", {d['config'].get('num_warps', '-')}, {d['config'].get('num_stages', '-')}",
                     *[_bytes(d["by_arch"][a]) for a in archs]] for d in result["defaults"]])
    tuned = result["tuned"]
    lines += ["", f"Tuned files read: {tuned['files']} ({', '.join(tuned['config_dirs'])}), {tuned['configs']} configurations;"
              " overflowing: " + "; ".join(f"{a} {tuned['configs_overflowing'][a]} configurations in"
                                           f" {tuned['files_overflowing'][a]} files" for a in archs) + "."]
    formula = result.get("formula") or {}
    if formula:
        lines += ["", "Formula against the compile (distinct configurations):", ""]
        lines += table(["arch", "compared", "exact", "fit verdict differs"],
                       [[a, f["compared"], f["exact"], f["fit_verdict_differs"]] for a, f in formula.items()])
    emitted = result.get("emitted") or {}
    if emitted.get("files"):
        lines += ["", f"Rewritten for {emitted['arch']} ({emitted['device_name']}, from {emitted['from_device']}):"
                  f" {len(emitted['files'])} files, {emitted['changed_count']} configurations changed, all fit:"
                  f" {result.get('emitted_all_fit')}.", ""]
        lines += table(["file", "M", "from", "to", "bytes"],
                       [[c["file"], c["batch"], _config(c["from"]), _config(c["to"]), f"{c['from_bytes']} -> {c['to_bytes']}"]
                        for c in emitted["changed_configs"][:CHANGES_SHOWN]])
        if emitted["changed_count"] > CHANGES_SHOWN:
            lines += ["", f"... and {emitted['changed_count'] - CHANGES_SHOWN} more (the step's result.json)."]
    return lines


def _config(config: dict[str, int]) -> str:
    return "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**config) + f" s{config.get('num_stages', '-')}"


def kernel_markdown(result: dict[str, Any] | None, table: Table) -> list[str]:
    if not result or not result.get("by_case"):
        return []
    archs = result["archs"]
    lines = ["", f"## Shared memory of {result['kernel']} ({result['package']} {result['version']},"
             f" Triton {result['triton']})", "", f"`{result['source']}`; limits: "
             + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs) + ".", ""]
    rows = []
    for case in result["cases"]:
        by_arch = result["by_case"][case["name"]]
        rows.append([case["name"], case.get("num_warps", "-"), case.get("num_stages", "-"),
                     *[f"{r['shared_bytes']} ({'fits' if r['fits'] else '**overflows**'})" if r["fits"] is not None
                       else f"compile failed: {r['error']}" for r in (by_arch[a] for a in archs)]])
    return lines + table(["case", "warps", "stages", *archs], rows)


SECTIONS = {"triton-moe-configs": moe_markdown, "triton-smem": kernel_markdown}


def markdown(steps: dict[str, dict[str, Any]], table: Table) -> list[str]:
    """A section per step of these kinds that left a result, headed with the step's name."""
    lines = []
    for name, entry in steps.items():
        section = SECTIONS.get(entry.get("uses"))
        result = entry.get("result")
        if section and isinstance(result, dict) and result.get("status") == "ok":
            body = section(result, table)
            if body:
                lines += [body[0], body[1] + f" (step `{name}`)", *body[2:]]
    return lines
