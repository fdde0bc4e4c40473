"""``invoke report --upstream runs/<id>``: a bug report for FlashInfer, drafted from a run record.

Everything in it comes from the record (manifest, the static-smem, probe and triage results) and from the fit
table and ``invoke fix`` (no GPU): the environment fingerprint, the byte accounting of each kernel that cannot
start (tensors, pipelines, scheduler, tensormaps, padding, against the limit), the one-command reproduction, the
workaround for the release, and the guard that would have turned the failure into a clear message (as
TensorRT-LLM did in its PR 12704: compare ``sizeof(SharedStorage)`` with the device's opt-in limit before
launch, and drop SM120 candidates that cannot fit).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError, ReprokitError
from reprokit.fix import crash_report, upstream_guards
from reprokit.fix.knobs import fix_plan
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Manifest
from reprokit.records.run_dir import load_manifest
from reprokit.step_kinds import STEP_KINDS, ResultError, StepKind, given
from reprokit.step_kinds.static_smem import KIND as STATIC_SMEM
from reprokit.step_kinds.static_smem import KernelMembers, SmemRow, Sources, Wheel
from reprokit.step_kinds.triage import KIND as TRIAGE
from reprokit.triage.rules import LogVerdict
from reprokit.workloads.facts.exits import StepStatus
from reprokit.workloads.facts.smem_fit import KernelFit

MEMBERS = ("tensors", "pipelines", "scheduler_response", "tensormaps")
GUARD = """```cpp
// moe_gemm_tma_ws_launcher.inl, before gemm.initialize(...): fail with the numbers, not "Error Internal"
int device = 0, smem_optin_bytes = 0;
TLLM_CUDA_CHECK(cudaGetDevice(&device));
TLLM_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
constexpr int kernel_smem_bytes = static_cast<int>(sizeof(typename GemmKernel::SharedStorage));
TLLM_CHECK_WITH_INFO(kernel_smem_bytes <= smem_optin_bytes,
    "MoE grouped GEMM requires %d bytes shared memory but device supports %d", kernel_smem_bytes, smem_optin_bytes);
```
and in `get_candidate_configs_sm120` (`cutlass_heuristic.cpp`), leave out the tiles whose kernels cannot fit the
device's opt-in limit, so the autotuner never offers them (TensorRT-LLM PR 12704 does both)."""


def _read(path: Path, kind: StepKind) -> Any:
    """The step's result as its kind's model; None when there is none; a wrong field is one line naming it."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    try:
        return kind.read_result(data, str(path))
    except ResultError as exc:
        raise ConfigError(str(exc)) from None


def accounting(row: SmemRow, limit: int) -> list[str]:
    """One failing kernel's SharedStorage, member by member, against the limit."""
    kernel = row.kernel or KernelMembers()
    parts = [(name.replace("_", " "), getattr(kernel, f"kernel_{name}_bytes")) for name in MEMBERS]
    parts = [(name, size) for name, size in parts if isinstance(size, int)]
    total = row.kernel_smem_bytes
    padding = total - sum(size for _, size in parts)
    lines = [f"| {name} | {size} |" for name, size in parts]
    if padding:
        lines.append(f"| padding to {kernel.kernel_smem_alignment}-B alignment | {padding} |")
    lines += [f"| **SharedStorage** | **{total}** |", f"| limit | {limit} |", f"| over by | {total - limit} |"]
    return ["| member | bytes |", "|---|---|", *lines]


def _fingerprint_lines(manifest: Manifest) -> list[str]:
    fingerprint = manifest.fingerprint or Fingerprint()
    devices = fingerprint.devices
    packages = fingerprint.installed
    lines = [f"- pins: {', '.join(f'{k} {v}' for k, v in (manifest.pins or {}).items())}",
             f"- host: {_said(fingerprint.host, 'kernel')}, python {_said(fingerprint.host, 'python')}",
             f"- driver {_said(fingerprint.driver, 'driver_release')} (CUDA driver API "
             f"{_said(fingerprint.driver, 'cuda_driver_api')}), nvcc {_said(fingerprint, 'nvcc')}",
             f"- packages that ran: {', '.join(f'{k} {v}' for k, v in packages.items()) or 'none recorded'}"]
    for device in devices[:1]:
        lines.append(f"- GPU: {len(devices)} x {device.name} ({device.gpu_arch}, {device.multiprocessor_count} "
                     f"SMs), opt-in shared memory per block {device.max_shared_memory_per_block_optin_bytes} B")
    if manifest.pin_drift:
        lines.append(f"- differences from the pins: {manifest.pin_drift}")
    return lines


def _said(part: Any, name: str) -> Any:
    """A fingerprint field as the report writes it: ``?`` where the fingerprint has no such key (a null is None)."""
    return getattr(part, name) if part is not None and part.written(name) else "?"


def _cached_wheel(version: str) -> Path | None:
    """The release's wheel from reprokit's cache or the index; None (said in the section) when neither has it."""
    from reprokit.workloads.contract import WorkloadError
    from reprokit.workloads.static_smem import wheel as wheels

    try:
        return wheels.fetch(version, wheels.default_cache_dir()).path
    except WorkloadError:
        return None


def _brief(row: SmemRow) -> dict[str, Any]:
    return {"op": row.op, "tactic": row.tactic, "tile": row.tile, "fusion": row.fusion,
            "kernel_smem_bytes": row.kernel_smem_bytes}


def _engine_crash(run_dir: Path, manifest: Manifest) -> str | None:
    """The report of a serving engine that died (the triage's FATAL), for a run without byte accounting."""
    triage = _read(run_dir / "steps" / "triage" / "result.json", TRIAGE)
    if triage is None or triage.verdict != LogVerdict.FATAL.value:
        return None
    entry = next((s for s in manifest.steps if s.name == crash_report.SERVE_STEP), None)
    serve = _read(run_dir / "steps" / entry.name / "result.json", STEP_KINDS[entry.uses]) if entry else None
    try:
        params = json.loads((run_dir / "steps" / crash_report.SERVE_STEP / "params.json").read_text())
    except (OSError, ValueError):
        params = {}
    return crash_report.crash_report(run_dir, manifest, triage, serve, params if isinstance(params, dict) else {})


def upstream_report(run_dir: Path) -> str:
    manifest = load_manifest(run_dir)  # validated, or a one-line error naming the field
    static = _read(run_dir / "steps" / "static-smem" / "result.json", STATIC_SMEM)
    if static is None and (crash := _engine_crash(run_dir, manifest)) is not None:
        return crash
    if static is None or static.status != StepStatus.OK:
        raise ConfigError(f"{run_dir}: its static-smem step has no result; the report needs the byte accounting "
                          f"(run `invoke smem --flashinfer {(manifest.pins or {}).get('flashinfer-python', 'V')}` or the kit)")
    triage = _read(run_dir / "steps" / "triage" / "result.json", TRIAGE)
    version, arch = static.flashinfer, static.arch
    limit = static.capacity_bytes  # the arch's (CUTLASS's constant); a probed host may be another arch
    failing = [r for r in static.rows or [] if r.verdict == KernelFit.EXCEEDS]
    outputs: dict[int, list[str]] = {}
    for row in failing:  # one kernel per output type, the same bytes: one section per tactic
        outputs.setdefault(row.tactic, []).append(row.output_dtype)
    unique = [next(r for r in failing if r.tactic == tactic) for tactic in outputs]
    kit = manifest.kit_name or "ep8-crash"
    tactics = "; ".join(f"{op.rsplit('::', 1)[-1]} {', '.join(map(str, t))}" for op, t in (static.failing_tactics or {}).items() if t)
    host_arches = (manifest.fingerprint or Fingerprint()).gpu_arches
    lines = [f"# [SM120] CUTLASS fused-MoE tactics {tactics} cannot start: SharedStorage {unique[0].kernel_smem_bytes if unique else '?'} B "
             f"> {limit} B (FlashInfer {version})", "",
             "## What happens", "",
             f"On {arch} (opt-in shared memory per block {limit} B), FlashInfer {version}'s autotuner tries the CUTLASS "
             f"fused-MoE tactics {tactics}; `GemmUniversalAdapter::initialize` asks `cudaFuncSetAttribute` for "
             "the kernel's `sizeof(SharedStorage)`, the device refuses, and the launcher throws `Failed to initialize "
             "cutlass TMA WS grouped gemm. Error: Error Internal`. The autotuner skips the tactic and the server comes up.",
             ""]
    if host_arches and arch not in host_arches:
        lines += [f"This record ran on {', '.join(host_arches)}: everything said here about {arch} is the static "
                  "analysis of the wheel (nvcc, no GPU of that arch), not an observation.", ""]
    if triage:
        lines += [f"Server log triage: **{triage.verdict}**, "
                  f"{sum(given(r.count, 0) for r in triage.autotune_failures or [])} failed tactic profiles on tiles "
                  f"{', '.join(triage.autotune_failure_tiles or []) or 'none'}.", ""]
    sources = static.sources or Sources()
    wheel = sources.wheel or Wheel()
    lines += ["## Environment", "", *_fingerprint_lines(manifest),
              f"- analysed wheel: {wheel.file} (sha256 {(wheel.sha256 or '')[:16]}), "
              f"flashinfer commit {sources.flashinfer_git_commit or 'not recorded in the wheel'}, CUTLASS"
              f" {(sources.cutlass.version if sources.cutlass else None) or 'version unknown'}",
              "", "## Byte accounting of each kernel that cannot start", ""]
    for row in unique:
        lines += [f"### tactic {row.tactic} ({row.op}): tile {row.tile} ({row.tile_enum}), {row.fusion}, "
                  f"swap_ab {'yes' if row.swap_ab else 'no'}, {row.stages} stages, output {', '.join(outputs[row.tactic])}", "",
                  *accounting(row, limit), "", f"Why: {row.explanation}.", ""]
    lines += ["## Reproduce (no GPU needed for the prediction)", "", "```sh",
              f"invoke smem --flashinfer {version} --arch {arch}     # the table above, from the wheel's own sources",
              f"invoke repro {kit} --host <an {arch} host>           # the whole case: probe, analysis, serve, triage",
              "```", "", "## Workaround for this release", ""]
    try:
        plan = fix_plan(version, arch, given(static.dtype, "nvfp4"), (manifest.pins or {}).get("sglang"))
        lines += [plan["summary"] + ".", "", f"(`invoke fix --flashinfer {version} --arch {arch}`: every flag checked against "
                  "the sglang release's own options; blocklists loaded by the release's own loader.)", ""]
    except ReprokitError as exc:
        lines += [f"`invoke fix` could not derive one here: {exc}", ""]
    lines += upstream_guards.section(version, _cached_wheel(version), [_brief(r) for r in unique], limit)
    lines += ["## The guard that would prevent it", "", GUARD, ""]
    return "\n".join(lines)

