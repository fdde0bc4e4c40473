"""`invoke fix`, `report --upstream`: what keeps the failing tactics from being tried, and the bug report for FlashInfer.

What the fix is and what the report says is ``reprokit.fix``'s (``plan``, ``upstream_report``); here they are
printed or written, and the exit code decided.
"""

from __future__ import annotations

import json
from pathlib import Path

from invoke import Exit

from reprokit.commands import tasking
from reprokit.commands.console import as_typed, print_markdown
from reprokit.commands.flags import JSON_HELP
from reprokit.commands.tasking import task
from reprokit.config.kit import load_kit
from reprokit.errors import ConfigError, ExitCode
from reprokit.fix.knobs import fix_plan, kit_stack
from reprokit.fix.mechanisms import summary_lines
from reprokit.fix.upstream_report import upstream_report
from reprokit.records.run_dir import resolve_run_dir
from reprokit.workloads.static_smem.targets import ARCHES, DTYPES


def fix(kit: str | None, flashinfer: str | None, arch: str | None, dtype: str, sglang: str | None,
        gpu: str | None, out: str | None, as_json: bool, kits_dir: str = "kits", vllm: str | None = None,
        block: str | None = None) -> int:
    """Print (and with ``out`` write) what keeps the failing tactics from being tried; 0 unless something failed."""
    if kit:
        loaded, path = load_kit(kit, kits_dir)
        kit_flashinfer, kit_arch, kit_sglang = kit_stack(loaded, path)
        flashinfer, arch, sglang = flashinfer or kit_flashinfer, arch or kit_arch, sglang or kit_sglang
    if not flashinfer:
        raise ConfigError("invoke fix: give --kit KIT, or --flashinfer VERSION (with --arch and --sglang)")
    arch = arch or "sm120"
    if arch not in ARCHES:
        raise ConfigError(f"--arch {arch!r}: not analysed; known: {', '.join(ARCHES)}")
    if dtype not in DTYPES:
        raise ConfigError(f"--dtype {dtype!r}: not analysed; known: {', '.join(DTYPES)}")
    plan = fix_plan(flashinfer, arch, dtype, sglang, gpu, out_dir=Path(out) if out else None, vllm=vllm,
                    block=parse_block(block) if block else None)
    if as_json:
        print(json.dumps(plan, indent=2))
        return ExitCode.PASS
    print(plan["summary"])
    if plan.get("autotuner"):
        print(f"what flashinfer {flashinfer}'s autotuner honours (read from its sources):")
        for line in summary_lines(plan["autotuner"]):
            print(f"  {line}")
    for knob in plan["knobs"]:
        mark = "use" if knob["name"] == plan["recommended"] else ("ok " if knob["applies"] else "no ")
        what = " ".join(knob.get("flags") or []) or " ".join(f"{k}={v}" for k, v in (knob.get("env") or {}).items())
        detail = knob["cost"] if knob["applies"] else knob.get("why_not", "")
        print(f"  [{mark}] {knob['name']}: {what}\n        {detail}")
        if knob.get("verified"):
            print(f"        verified: {knob['verified']['with']}: {knob['verified']['log'][0] if knob['verified']['log'] else ''}")
        if knob.get("checked_against") and knob["applies"]:
            print(f"        checked against {knob['checked_against']}")
    if out:
        print(f"written: {Path(out) / 'fix.json'}" + (f", {Path(out) / 'tactics-blocklist.json'}"
                                                       if any(k.get('file') for k in plan['knobs']) else ""))
    else:
        blocklist = next((k.get("document") for k in plan["knobs"] if k.get("document")), None)
        if blocklist:
            print(f"blocklist (write it with --out DIR):\n{json.dumps(blocklist, indent=2)}")
    return ExitCode.PASS


def parse_block(text: str) -> dict[str, list[int]]:
    """``gemm1:0,5;gemm2:40`` -> {"gemm1": [0, 5], "gemm2": [40]}; a bad part is one line naming it."""
    block: dict[str, list[int]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        op, sep, numbers = part.rpartition(":")
        try:
            tactics = [int(n) for n in numbers.split(",") if n.strip()]
        except ValueError:
            tactics = []
        if not sep or not op or not tactics:
            raise ConfigError(f"--block {part!r}: give OP:TACTIC[,TACTIC...] (e.g. gemm1:0,5;gemm2:40)")
        block.setdefault(op, []).extend(tactics)
    return block


def write_upstream_report(run_dir: str, out: str | None, runs_dir: str = "runs") -> int:
    """Print the draft (the record is left as it is), or write it to ``out``; the run by its path, id or a part."""
    text = upstream_report(resolve_run_dir(run_dir, runs_dir))
    if out:
        Path(out).write_text(text)
        print(f"upstream report: {out}")
    else:
        print_markdown(text)
    return ExitCode.PASS


@task(name="fix", help={"kit": "take FlashInfer, sglang and the arch from this kit's pins (e.g. ep8-crash)",
                        "flashinfer": "flashinfer-python release (default: the kit's pin)", "arch": "sm120|sm121|sm100|sm90",
                        "dtype": "MoE dtype: nvfp4 (default), fp8, bf16", "sglang": "sglang release whose flags to check",
                        "gpu": "pin the blocklist to this GPU name (default: any, '*')",
                        "out": "write fix.json and tactics-blocklist.json into this directory",
                        "vllm": "also check vLLM's VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS in this vLLM release's envs.py",
                        "block": "block these tactics instead of the failing ones: gemm1:0,5;gemm2:40",
                        **JSON_HELP})
def fix_task(c, kit=None, flashinfer=None, arch=None, dtype="nvfp4", sglang=None, gpu=None, out=None, json=False,
             vllm=None, block=None):
    """What keeps FlashInfer's failing tactics from being tried: blocklist, sglang/vLLM knobs or fallback, checked (no GPU)."""
    tasking.call(fix, kit, flashinfer, arch, dtype, sglang, gpu, out, json, tasking.paths(c)["kits_dir"], vllm, block)


@task(name="report", positional=["run_dir"],
      help={"run-dir": "a run record: its directory, its id or a unique part of it", "upstream": "draft a bug report for FlashInfer",
            "out": "write it to this file (default: print it)"})
def report_task(c, run_dir, upstream=False, out=None):
    """--upstream: a FlashInfer bug report from a run: fingerprint, byte accounting, reproduction, workaround, guard."""
    if not upstream:
        raise Exit(as_typed(f"error: the run's own report is {run_dir}/report.md (`invoke summary -r {run_dir}` prints"
                            f" it); `invoke report --upstream {run_dir}` drafts the bug report for FlashInfer"), code=ExitCode.BAD_INPUT)
    tasking.call(write_upstream_report, run_dir, out, tasking.paths(c)["runs_dir"])


ns = tasking.group("fix", "the workaround, and the bug report for upstream", fix_task, report_task)
