"""The report sections of the Triton shared-memory steps: bytes per arch next to each arch's limit.

``triton-moe-configs``: sglang's defaults, the tuned files that overflow, where the pipeliner's formula
matches the compile, and the files rewritten for SM120. ``triton-smem``: one row per case. Each section is
data (a title, then paragraphs and tables), rendered by the Markdown and the HTML report alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHANGES_SHOWN = 10


@dataclass
class Section:
    title: str
    blocks: list[str | tuple[list[str], list[list[Any]]]] = field(default_factory=list)  # paragraph, or (headers, rows)


def _bytes(row: dict[str, Any]) -> str:
    compiled, predicted = row.get("compiled_bytes"), row.get("predicted_bytes")
    verdict = {True: "fits", False: "OVERFLOWS", None: "not sized"}[row.get("fits")]
    if compiled is not None:
        return f"{compiled} ({verdict}; formula {predicted})"
    return f"{predicted} ({verdict}, formula)" if predicted is not None else verdict


def _config(config: dict[str, int]) -> str:
    return "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**config) + f" s{config.get('num_stages', '-')}"


def moe_section(name: str, result: dict[str, Any]) -> Section | None:
    if not result.get("defaults"):
        return None
    archs = result["archs"]
    how = f"compiled with Triton {result['triton']}" if result.get("compiled") else "the pipeliner's formula, not compiled"
    section = Section(f"Triton fused-MoE configurations of sglang {result.get('sglang')} ({how}; step {name})")
    section.blocks.append("Limits: " + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs) + ".")
    section.blocks.append((["default (get_default_config)", "BLOCK MxNxK, warps, stages", *archs],
                           [[d["when"], "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x{BLOCK_SIZE_K}".format(**d["config"])
                             + f", {d['config'].get('num_warps', '-')}, {d['config'].get('num_stages', '-')}",
                             *[_bytes(d["by_arch"][a]) for a in archs]] for d in result["defaults"]]))
    tuned = result["tuned"]
    section.blocks.append(
        f"Tuned files read: {tuned['files']} ({', '.join(tuned['config_dirs'])}), {tuned['configs']} configurations;"
        " overflowing: " + "; ".join(f"{a} {tuned['configs_overflowing'][a]} configurations in"
                                     f" {tuned['files_overflowing'][a]} files" for a in archs) + ".")
    if result.get("formula"):
        section.blocks.append("The formula against the compile (distinct configurations):")
        section.blocks.append((["arch", "compared", "exact", "fit verdict differs"],
                               [[a, f["compared"], f["exact"], f["fit_verdict_differs"]]
                                for a, f in result["formula"].items()]))
    emitted = result.get("emitted") or {}
    if emitted.get("files"):
        section.blocks.append(f"Rewritten for {emitted['arch']} ({emitted['device_name']}, from {emitted['from_device']}):"
                              f" {len(emitted['files'])} files, {emitted['changed_count']} configurations changed,"
                              f" all fit: {result.get('emitted_all_fit')}.")
        section.blocks.append((["file", "M", "from", "to", "bytes"],
                               [[c["file"], c["batch"], _config(c["from"]), _config(c["to"]),
                                 f"{c['from_bytes']} -> {c['to_bytes']}"]
                                for c in emitted["changed_configs"][:CHANGES_SHOWN]]))
        if emitted["changed_count"] > CHANGES_SHOWN:
            section.blocks.append(f"... and {emitted['changed_count'] - CHANGES_SHOWN} more (the step's result.json).")
    return section


def kernel_section(name: str, result: dict[str, Any]) -> Section | None:
    if not result.get("by_case"):
        return None
    archs = result["archs"]
    section = Section(f"Shared memory of {result['kernel']} ({result['package']} {result['version']},"
                      f" Triton {result['triton']}; step {name})")
    section.blocks.append(f"{result['source']}; limits: " + ", ".join(f"{a} {result['limits_bytes'][a]} B" for a in archs)
                          + ".")
    rows = []
    for case in result["cases"]:
        cells = []
        for arch in archs:
            row = result["by_case"][case["name"]][arch]
            cells.append(f"{row['shared_bytes']} ({'fits' if row['fits'] else 'OVERFLOWS'})" if row["fits"] is not None
                         else f"compile failed: {row['error']}")
        rows.append([case["name"], case.get("num_warps", "-"), case.get("num_stages", "-"), *cells])
    section.blocks.append((["case", "warps", "stages", *archs], rows))
    return section


BUILDERS = {"triton-moe-configs": moe_section, "triton-smem": kernel_section}


def sections(steps: dict[str, dict[str, Any]]) -> list[Section]:
    """A section per step of these kinds that left a result."""
    found = []
    for name, entry in steps.items():
        build, result = BUILDERS.get(entry.get("uses")), entry.get("result")
        if build and isinstance(result, dict) and result.get("status") == "ok":
            section = build(name, result)
            if section:
                found.append(section)
    return found


def markdown(steps: dict[str, dict[str, Any]], table) -> list[str]:
    lines: list[str] = []
    for section in sections(steps):
        lines += ["", f"## {section.title}"]
        for block in section.blocks:
            lines += [""] + (table(*block) if isinstance(block, tuple) else [block])
    return lines


def html(steps: dict[str, dict[str, Any]], table, esc) -> list[str]:
    parts: list[str] = []
    for section in sections(steps):
        parts.append(f"<h2>{esc(section.title)}</h2>")
        parts += [table(*block) if isinstance(block, tuple) else f"<p>{esc(block)}</p>" for block in section.blocks]
    return parts
