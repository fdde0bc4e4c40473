"""The Triton steps' report sections, Markdown and HTML, from the committed records."""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.records.run_dir import load_manifest
from reprokit.report import sections

EVIDENCE = Path(__file__).resolve().parents[3] / "evidence" / "triton-cross-compile"


def steps_of(record: Path) -> dict:
    steps = {s.name: s for s in load_manifest(record).steps}
    for step in steps.values():
        step.result = json.loads((record / step.result_file).read_text())
    return steps


def test_the_mla_section_puts_sm120_next_to_sm90_per_case():
    record = next(EVIDENCE.glob("*-triton-mla-decode-*/"))
    lines = sections.markdown(steps_of(record), "findings")
    assert lines == [
        "", "## Shared memory of _fwd_grouped_kernel_stage1 (sglang 0.5.9, Triton 3.5.1; step compile)", "",
        "sglang/srt/layers/attention/triton_ops/decode_attention.py; limits: sm120 101376 B, sm90 232448 B.", "",
        "| case | warps | stages | sm120 | sm90 |", "|---|---|---|---|---|",
        "| bf16-kv-2-stages | 4 | 2 | 89088 (fits) | 89088 (fits) |",
        "| fp8-kv-2-stages | 4 | 2 | 53760 (fits) | 54272 (fits) |",
        "| fp8-kv-3-stages | 4 | 3 | 54144 (fits) | 54656 (fits) |",
        "| bf16-kv-3-stages | 4 | 3 | 89472 (fits) | 89472 (fits) |"]


def test_the_moe_sections_one_per_step_in_markdown_and_html():
    record = next(EVIDENCE.glob("*-triton-moe-configs-*/"))
    steps = steps_of(record)
    titles = [line[3:] for line in sections.markdown(steps, "findings") if line.startswith("## ")]
    assert titles == ["Triton fused-MoE configurations of sglang 0.5.9 (the pipeliner's formula, not compiled; step predict)",
                      "Triton fused-MoE configurations of sglang 0.5.9 (compiled with Triton 3.5.1; step compile)"]
    text = "\n".join(sections.markdown(steps, "findings"))
    assert ("| dtype == 'fp8_w8a8' and block_shape is None | 128x256x128, 8, 4 | 147456 (OVERFLOWS; formula 147456)"
            " | 196608 (fits; formula 196608) |") in text
    assert "| sm120 | 302 | 301 | 0 |" in text and "| sm90 | 302 | 301 | 0 |" in text
    page = "\n".join(sections.html(steps, "findings"))
    assert page.count("<h2>") == 2 and page.count("<table>") == 5
    assert "<td>147456 (OVERFLOWS; formula 147456)</td>" in page
