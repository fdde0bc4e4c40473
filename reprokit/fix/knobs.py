"""``invoke fix``: from the static diagnosis to what keeps the failing tactics from ever being tried, no GPU.

For a FlashInfer release and an arch (or a kit's pins), the failing tactics come from the fit table (or the
analysis, when the table lacks the cell), and each knob is judged against the release that would run it:

1. FlashInfer's tactics blocklist (``FLASHINFER_TACTICS_BLOCKLIST``), when that release's autotuner reads one:
   only the failing tactics are lost; the file is checked by loading it with the release's own loader.
2. sglang's ``--flashinfer-autotune-skip-ops <ops>``, when both the sglang release declares it and FlashInfer's
   ``autotune()`` takes ``skip_ops``: every tactic of the skipped ops loses tuning (they run the binding's
   default tactic).
3. sglang's ``--disable-flashinfer-autotune``, the fallback: no FlashInfer op is tuned at all.
4. with ``vllm``: vLLM's ``VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS`` (comma-separated ops), checked in its ``envs.py``.

Every flag is checked against that sglang release's own option table (``upstream_args.server_options``). The
first knob that applies is the recommendation; the others are listed with why they do or do not apply.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError, StepError
from reprokit.fix import blocklist, fit_table, mechanisms
from reprokit.upstream.args import server_options
from reprokit.workloads.contract import WorkloadError, write_json_atomic
from reprokit.workloads.static_smem import wheel as wheels

SKIP_OPS_FLAG = "--flashinfer-autotune-skip-ops"
DISABLE_FLAG = "--disable-flashinfer-autotune"
BLOCKLIST_FILE = "tactics-blocklist.json"
# what a blocklist is verified against: the release it pins, any value of everything else
VERIFY_ENVIRONMENT = {"cuda_version": "12.9", "cublas_version": "12.9.1.4", "cudnn_version": "91002",
                      "cudnn_frontend_version": "1.14.0", "cutlass_dsl_version": "4.3.0",
                      "gpu": "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"}


def failing_cell(version: str, arch: str, dtype: str, cache_dir: Path, table_path: Path) -> dict[str, Any]:
    """The fit-table cell, computed (static analysis, nvcc) when the table does not have it."""
    found = fit_table.cell(version, arch, dtype, table_path)
    if found is None or found["status"] == "unreadable":
        found = fit_table.compute_cell(version, arch, dtype, cache_dir, None, cache_dir / "fit_table" / "work")
        found["source"] = "computed now (not in the fit table)"
    else:
        found = {**found, "source": f"fit table {table_path.name}"}
    if found["status"] == "unreadable":
        raise StepError(f"flashinfer {version} ({arch}, {dtype}): the static analysis cannot read it: {found['reason']}")
    return found


def skip_ops_support(wheel: Path) -> tuple[bool, str]:
    """Whether the release's ``autotune()`` context manager takes ``skip_ops`` (0.6.13+), with where it says so."""
    member, source = blocklist.autotuner_source(wheel)
    match = re.search(r"def autotune\(([^)]*)\)", source, re.S)
    if match and "skip_ops" in match.group(1):
        line = source[:match.start()].count("\n") + 1
        return True, f"{member}:{line} autotune(..., skip_ops=...)"
    return False, f"{member}: autotune() takes no skip_ops"


def _tactic_word(count: int) -> str:
    return f"{count} tactic{'s' if count != 1 else ''}"


def fix_plan(version: str, arch: str, dtype: str = "nvfp4", sglang: str | None = None, gpu: str | None = None,
             cache_dir: Path | None = None, table_path: Path = fit_table.DATA_FILE, out_dir: Path | None = None,
             vllm: str | None = None, block: dict[str, list[int]] | None = None) -> dict[str, Any]:
    """The knobs for ``version`` on ``arch``: which apply, what each costs, the files and flags to use, verified.

    ``block`` ({op: [tactic, ...]}) names the tactics to block instead of the failing ones: to see on a GPU where
    none fails (sm90) that the release's autotuner really never profiles a blocked tactic.
    """
    cache_dir = cache_dir or wheels.default_cache_dir()
    cell = failing_cell(version, arch, dtype, cache_dir, table_path)
    plan: dict[str, Any] = {"flashinfer": version, "arch": arch, "dtype": dtype, "sglang": sglang, "vllm": vllm,
                            "diagnosis": {k: cell.get(k) for k in ("status", "reason", "failing_tactics", "failing_tiles",
                                                                   "tactic_counts", "capacity_bytes", "source")},
                            "knobs": [], "recommended": None}
    # Both kinds cannot run: over the capacity (initialize fails) and rejected by the dispatcher (it throws).
    rejected = cell.get("dispatch_rejected_by_op") or {}
    failing = {op: sorted(set(t) | set(rejected.get(op, []))) for op, t in (cell.get("failing_tactics") or {}).items()}
    failing = {op: t for op, t in failing.items() if t}
    if block is not None:
        failing = chosen_tactics(block, cell["tactic_counts"], version, arch, dtype)
    plan["blocked"] = {"chosen": failing if block is not None else None,"over_capacity": cell.get("failing_tactics"), "dispatch_rejected": rejected,
                       "dispatch_error": cell.get("dispatch_error")}
    if block is None and (cell["status"] == "no_kernels" or not failing):
        plan["summary"] = (f"nothing to block: {cell.get('reason')}" if cell["status"] == "no_kernels" else
                           f"nothing to block: no tactic of flashinfer {version} exceeds {arch}'s "
                           f"{cell['capacity_bytes']} B")
        return plan
    try:
        wheel = wheels.fetch(version, cache_dir).path
    except WorkloadError as exc:
        raise StepError(f"flashinfer {version}: {exc}") from None
    plan["autotuner"] = {**mechanisms.mechanisms(wheel), "seen_on_gpu": mechanisms.seen_on_gpu(version)}
    counts = cell["tactic_counts"]
    lost = sum(len(t) for t in failing.values())
    total = sum(counts.values())
    options = server_options(sglang, cache_dir) if sglang else None
    knobs = plan["knobs"]
    knobs.append(_blocklist_knob(version, wheel, failing, counts, gpu, out_dir, lost, total))
    if block is not None:
        knobs[-1]["cost"] = knobs[-1]["cost"].replace("exactly the failing ones", "exactly the chosen ones")
    default_tactics = cell.get("default_tactics") or {}
    skipped_defaults = _defaults_text({op: d for op, d in default_tactics.items() if op in failing})
    knobs.append(_skip_ops_knob(version, wheel, failing, counts, options, skipped_defaults))
    knobs.append(_disable_knob(options, total, _defaults_text(default_tactics)))
    if vllm:
        knobs.append(_vllm_knob(vllm, version, wheel, failing, counts, skipped_defaults))
    usable = [k for k in knobs if k["applies"]]
    plan["recommended"] = usable[0]["name"] if usable else None
    what = "are chosen to be blocked" if block is not None else "cannot run"
    plan["summary"] = (f"flashinfer {version} on {arch}: {lost} of {total} {dtype} tactics {what} "
                       f"({', '.join(f'{op} {t}' for op, t in failing.items())}); "
                       + (f"use {usable[0]['name']}: {usable[0]['cost']}" if usable else
                          "no knob of this stack keeps them from being tried"))
    if out_dir is not None:
        write_json_atomic(out_dir / "fix.json", plan)
    return plan


def chosen_tactics(block: dict[str, list[int]], counts: dict[str, int], version: str, arch: str,
                   dtype: str) -> dict[str, list[int]]:
    """``block`` checked against the release's tactic numbering (gemm1 0..n1-1, gemm2 n1..): one line when it is off."""
    chosen: dict[str, list[int]] = {}
    for op, tactics in block.items():
        full = next((o for o in counts if o == op or o.rsplit("::", 1)[-1] == op), None)
        if full is None:
            raise ConfigError(f"--block {op}: flashinfer {version} ({arch}, {dtype}) tunes {', '.join(counts)}")
        offered = _op_range(full, counts)
        outside = sorted(set(tactics) - set(offered))
        if outside:
            raise ConfigError(f"--block {op}:{','.join(map(str, outside))}: flashinfer {version} ({arch}, {dtype}) "
                              f"numbers {full}'s tactics {offered[0]}-{offered[-1]}")
        chosen[full] = sorted(set(tactics))
    return {op: t for op, t in chosen.items() if t}


def _blocklist_knob(version: str, wheel: Path, failing: dict[str, list[int]], counts: dict[str, int],
                    gpu: str | None, out_dir: Path | None, lost: int, total: int) -> dict[str, Any]:
    fmt = blocklist.blocklist_format(wheel)
    knob: dict[str, Any] = {"name": "tactics-blocklist", "applies": fmt.reads_blocklist, "evidence": fmt.evidence,
                            "env": {blocklist.ENV_VAR: f"<path of {BLOCKLIST_FILE} on the GPU host>"},
                            "cost": f"{_tactic_word(lost)} of {total} never tried (exactly the failing ones); "
                                    "every other tactic is still tuned"}
    if not fmt.reads_blocklist:
        knob["why_not"] = f"flashinfer {version} does not read {blocklist.ENV_VAR} (added in 0.6.15)"
        return knob
    document = blocklist.blocklist_document(version, fmt, failing, gpu)
    with tempfile.TemporaryDirectory(prefix="reprokit-blocklist-") as scratch:
        target = (out_dir or Path(scratch)) / BLOCKLIST_FILE
        write_json_atomic(target, document)
        checked = _verified(version, wheel, fmt, target, failing, counts, gpu)
    knob.update(file=str(target) if out_dir is not None else None, document=document, verified=checked)
    return knob


def _verified(version: str, wheel: Path, fmt: blocklist.BlocklistFormat, target: Path, failing: dict[str, list[int]],
              counts: dict[str, int], gpu: str | None) -> dict[str, Any]:
    """Load ``target`` with the release's own TacticsBlocklist; every failing tactic must be filtered out."""
    environment = {k: VERIFY_ENVIRONMENT.get(k, "unknown") for k in fmt.metadata_keys}
    environment["flashinfer_version"] = version
    if gpu:
        environment["gpu"] = gpu
    tactics = {f"{op}::{fmt.runner_class}": _op_range(op, counts) for op in failing}
    checked = blocklist.verify(wheel, target, environment, tactics)
    kept_failing = {key: sorted(set(kept) & set(failing[key.rsplit("::", 1)[0]])) for key, kept in checked["kept"].items()}
    if not checked["loaded"] or any(kept_failing.values()):
        raise StepError(f"flashinfer {version}'s own TacticsBlocklist did not remove the failing tactics from "
                        f"{target}: loaded={checked['loaded']}, still kept {kept_failing}; log: {checked['log']}")
    return {"with": f"{wheel.name} flashinfer/tactics_blocklist.py TacticsBlocklist.load + filter",
            "environment": environment, "loaded": checked["loaded"], "summary": checked["summary"],
            "kept_tactics": checked["kept"], "log": checked["log"]}


def _op_range(op: str, counts: dict[str, int]) -> list[int]:
    """The tactic ints the autotuner offers for ``op``: gemm1 0..n1-1, gemm2 n1..n1+n2-1 (MoERunner.get_valid_tactics)."""
    ops = list(counts)
    start = sum(counts[o] for o in ops[:ops.index(op)])
    return list(range(start, start + counts[op]))


def _defaults_text(defaults: dict[str, dict[str, Any]]) -> str:
    """The untuned tactics: the binding's setRunnerProfiles takes the first of each op's list."""
    return "; ".join(f"{op.rsplit('::', 1)[-1]} tactic {d['tactic']} ({d['tile']} {d['fusion']}, "
                     f"{d['kernel_smem_bytes']} B, {d['verdict']})" for op, d in defaults.items())


def _skip_ops_knob(version: str, wheel: Path, failing: dict[str, list[int]], counts: dict[str, int],
                   options: Any, defaults: str) -> dict[str, Any]:
    ops = sorted(failing)
    flag = [SKIP_OPS_FLAG, *ops]
    supported, evidence = skip_ops_support(wheel)
    untuned = sum(counts[op] for op in ops)
    knob: dict[str, Any] = {"name": "sglang-skip-ops", "flags": flag, "evidence": evidence,
                            "cost": f"{_tactic_word(untuned)} of {', '.join(ops)} lose tuning: each skipped op runs "
                                    f"the binding's default, its first tactic ({defaults})"}
    problems = options.problems(flag) if options else [f"no sglang release given to check {SKIP_OPS_FLAG} against"]
    knob["checked_against"] = options.origin if options else None
    knob["applies"] = supported and not problems
    reasons = ([] if supported else [f"flashinfer {version}: {evidence} (skip_ops came in 0.6.13)"]) + problems
    if reasons:
        knob["why_not"] = "; ".join(reasons)
    return knob


VLLM_SKIP_OPS_ENV = "VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS"
VLLM_ENVS = "vllm/envs.py"


def _vllm_knob(vllm: str, version: str, wheel: Path, failing: dict[str, list[int]], counts: dict[str, int],
               defaults: str) -> dict[str, Any]:
    """vLLM's ``VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS`` (comma-separated ops), checked in that vLLM's own envs.py."""
    from reprokit.upstream.args import read_wheel_member, wheel_path

    ops = sorted(failing)
    vllm_wheel = wheel_path("vllm", vllm)
    envs = read_wheel_member(vllm_wheel, VLLM_ENVS)
    declared = re.search(rf'"{VLLM_SKIP_OPS_ENV}":\s*lambda', envs)
    comma = declared is not None and ".split(\",\")" in envs[declared.end():declared.end() + 400]
    supported, evidence = skip_ops_support(wheel)
    untuned = sum(counts[op] for op in ops)
    knob: dict[str, Any] = {"name": "vllm-skip-ops", "env": {VLLM_SKIP_OPS_ENV: ",".join(ops)},
                            "checked_against": f"vllm {vllm} {VLLM_ENVS}",
                            "cost": f"{_tactic_word(untuned)} of {', '.join(ops)} lose tuning: each skipped op runs "
                                    f"the binding's default, its first tactic ({defaults})",
                            "applies": supported and comma}
    pin = re.search(r"^Requires-Dist: flashinfer-python==(\S+)", _metadata(vllm_wheel), re.M)
    knob["vllm_pins_flashinfer"] = pin.group(1) if pin else None
    reasons = ([] if supported else [f"flashinfer {version}: {evidence} (skip_ops came in 0.6.13)"])
    if not comma:
        reasons.append(f"vllm {vllm} {VLLM_ENVS} declares no comma-separated {VLLM_SKIP_OPS_ENV}")
    if reasons:
        knob["why_not"] = "; ".join(reasons)
    return knob


def _metadata(wheel: Path) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        name = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        return zf.read(name).decode("utf-8", "replace") if name else ""


def _disable_knob(options: Any, total: int, defaults: str) -> dict[str, Any]:
    problems = options.problems([DISABLE_FLAG]) if options else [f"no sglang release given to check {DISABLE_FLAG} against"]
    knob: dict[str, Any] = {"name": "sglang-disable-autotune", "flags": [DISABLE_FLAG],
                            "checked_against": options.origin if options else None, "applies": not problems,
                            "cost": f"nothing is autotuned: all {total} MoE tactics (and every other FlashInfer op's "
                                    f"tuning) are lost; the MoE runs its default tactics ({defaults})"}
    if problems:
        knob["why_not"] = "; ".join(problems)
    return knob


def kit_stack(kit: Any, path: Path) -> tuple[str, str, str | None]:
    """(flashinfer, arch, sglang) of a loaded kit: its pins and its static-smem step's arch."""
    version = kit.pins.get("flashinfer-python")
    if not version:
        raise ConfigError(f"{path}: the kit pins no flashinfer-python; pass --flashinfer")
    arch = next((step.with_["arch"] for step in kit.steps
                 if step.uses == "static-smem" and step.with_.get("arch") not in (None, "host")), "sm120")
    return version, arch, kit.pins.get("sglang")
