"""The sweep step: parameters in, result.json and table.txt out.

Order of work: read the device (torch, and the CUDA driver through the SMEM
probe), measure the roofline, run each requested backend (boundary,
flashinfer, triton), measure the roofline again (clock drift shows), then
cross-check predictions against observations and summarise. A backend that
cannot run here is recorded as ``skipped`` with the reason; one that breaks
is recorded as ``failed`` with its exception; neither stops the others.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, progress
from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH, arch_of
from reprokit.workloads.tile_sweep import backends, classify, crosscheck, roofline, summary, table
from reprokit.workloads.tile_sweep.context import SweepContext
from reprokit.workloads.tile_sweep.shapes import DEFAULT_TOKENS_PER_EXPERT, derive_problems
from reprokit.workloads.tile_sweep.targets import CROSS_TARGET_ARCHES
from reprokit.workloads.tile_sweep.tiles import DEFAULT_GRID, TileConfig, parse_tile_configs

DEFAULT_PARALLELISM = ("tp8", "ep8")
DEFAULT_TIME_BUDGET_S = 480.0
KNOWN_PARAMS = ("model", "model_config", "parallelism", "tokens_per_expert", "backends", "predicted",
                "time_budget_s", "tile_configs", "device_index")


@dataclass
class SweepParams:
    model: str | None
    model_config: dict[str, Any]
    parallelism: list[str]
    tokens_per_expert: list[int]
    backends: list[str]
    predicted: str | None
    time_budget_s: float
    tile_configs: list[TileConfig]
    device_index: int


def _bad(message: str) -> WorkloadError:
    return WorkloadError(Exit.BAD_PARAMS, message)


def parse_params(params: dict[str, Any]) -> SweepParams:
    unknown = sorted(set(params) - set(KNOWN_PARAMS))
    if unknown:
        raise _bad(f"unknown parameters {', '.join(unknown)}; known: {', '.join(KNOWN_PARAMS)}")
    model_config = params.get("model_config")
    if not isinstance(model_config, dict):
        raise _bad("model_config is missing: the control plane passes the numbers of kits/models/<model>.yml;"
                   " by hand, put them in the params file as \"model_config\": {...}")
    parallelism = params.get("parallelism", list(DEFAULT_PARALLELISM))
    tokens = params.get("tokens_per_expert", list(DEFAULT_TOKENS_PER_EXPERT))
    chosen = params.get("backends", list(backends.RUN_ORDER))
    for name, value in (("parallelism", parallelism), ("tokens_per_expert", tokens), ("backends", chosen)):
        if not isinstance(value, list) or not value:
            raise _bad(f"{name} must be a non-empty list, got {value!r}")
    unknown_backends = [b for b in chosen if b not in backends.BACKEND_MODULES]
    if unknown_backends:
        raise _bad(f"unknown backends {unknown_backends}; known: {', '.join(backends.BACKEND_MODULES)}")
    budget = params.get("time_budget_s", DEFAULT_TIME_BUDGET_S)
    if not isinstance(budget, (int, float)) or isinstance(budget, bool) or budget <= 0:
        raise _bad(f"time_budget_s must be a positive number, got {budget!r}")
    predicted = params.get("predicted")
    if predicted is not None and not Path(predicted).is_file():
        raise _bad(f"predicted: no such file {predicted!r} (a static-smem result.json)")
    try:
        configs = parse_tile_configs(params["tile_configs"]) if "tile_configs" in params else list(DEFAULT_GRID)
        derive_problems(model_config, parallelism, tokens)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    return SweepParams(
        model=params.get("model"), model_config=model_config, parallelism=list(parallelism),
        tokens_per_expert=list(tokens), backends=[b for b in backends.RUN_ORDER if b in chosen],
        predicted=predicted, time_budget_s=float(budget), tile_configs=configs,
        device_index=int(params.get("device_index", 0)),
    )


def _open_device(index: int) -> tuple[Any, dict[str, Any], str | None]:
    """torch and the device's facts, or (None, {}, why not)."""
    try:
        import torch  # noqa: PLC0415 - provided by the host
    except ImportError as exc:
        return None, {}, f"torch is not importable: {exc}"
    if not torch.cuda.is_available():
        return None, {}, "torch sees no CUDA device (torch.cuda.is_available() is False)"
    torch.cuda.set_device(index)
    props = torch.cuda.get_device_properties(index)
    optin = getattr(props, "shared_memory_per_block_optin", None)
    source = "torch"
    try:
        from reprokit.workloads import smem_probe  # noqa: PLC0415

        drv, _count = smem_probe.init_driver()
        optin = smem_probe.query_device(drv, index)["max_shared_memory_per_block_optin_bytes"]
        source = "cuda driver attribute 97"
    except Exception as exc:  # noqa: BLE001 - torch's number still stands; say why the driver's is missing
        source = f"torch (driver query failed: {exc})"
    device = {
        "index": index,
        "name": props.name,
        "capability": [props.major, props.minor],
        "gpu_arch": arch_of(props.major, props.minor),
        "multiprocessor_count": props.multi_processor_count,
        "smem_optin_bytes": optin,
        "smem_optin_source": source,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "total_memory_bytes": props.total_memory,
    }
    return torch, device, None


def _versions(torch: Any) -> dict[str, Any]:
    import importlib.metadata  # noqa: PLC0415

    versions: dict[str, Any] = {}
    for name in ("torch", "triton", "flashinfer-python", "cupy-cuda13x", "cupy-cuda12x"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    versions["torch_cuda"] = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
    return versions


def _run_backend(name: str, ctx: SweepContext) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        module = backends.load(name)
        reason = module.unavailable(ctx)
        if reason:
            section = {"status": "skipped", "reason": reason, "rows": []}
            if name == "triton" and ctx.torch is None and not reason.startswith("triton is not"):
                section["configs"] = _predict_only(ctx)
        else:
            progress(f"sweep: backend {name}")
            section = module.run(ctx)
    except Exception as exc:  # noqa: BLE001 - one broken backend must not lose the others' results
        section = {"status": "failed", "error": classify.describe_exception(exc),
                   "traceback": traceback.format_exc()[-4000:], "rows": []}
        if section["error"]["sticky"]:
            ctx.lost_context = f"backend {name}: {section['error']['text'][:300]}"
    section["elapsed_s"] = time.perf_counter() - started
    return section


def _predict_only(ctx: SweepContext) -> list[dict]:
    """No GPU: still compile every config for the cross targets and say what would fit there."""
    from reprokit.workloads.tile_sweep.backends import triton_backend  # noqa: PLC0415

    compiled = triton_backend.compile_predictions(ctx.configs, ctx.problems, None)
    limits = {arch: SMEM_OPTIN_BYTES_BY_ARCH[arch] for arch in CROSS_TARGET_ARCHES}
    return triton_backend.config_entries(ctx.configs, compiled, limits)


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    started = time.perf_counter()
    p = parse_params(params)
    problems = derive_problems(p.model_config, p.parallelism, p.tokens_per_expert)
    ctx = SweepContext(problems=problems, configs=p.tile_configs, out_dir=Path(out_dir),
                       deadline=time.monotonic() + p.time_budget_s, time_budget_s=p.time_budget_s,
                       model_config=p.model_config)
    torch, device, no_device = _open_device(p.device_index)
    timing: dict[str, float] = {}
    if torch is not None:
        ctx.torch, ctx.device = torch, device
        torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference must be float32
        torch.backends.cudnn.allow_tf32 = False
        ctx.flush = torch.empty(max(2 * (device["l2_bytes"] or 0), 256 << 20), dtype=torch.int8, device="cuda")
        progress(f"sweep: {device['name']} ({device['gpu_arch']}), opt-in {device['smem_optin_bytes']} B;"
                 f" measuring the roofline")
        t0 = time.perf_counter()
        ctx.ceilings = roofline.measure_ceilings(torch, ctx.flush)
        timing["roofline_s"] = time.perf_counter() - t0
        progress(f"sweep: copy {ctx.ceilings['copy_gbps']:.0f} GB/s, read {ctx.ceilings['read_gbps']:.0f} GB/s,"
                 f" dense GEMM {ctx.ceilings['dense_gemm_tflops']:.0f} TFLOP/s")

    sections = {name: _run_backend(name, ctx) for name in p.backends}
    for name, section in sections.items():
        timing[f"{name}_s"] = section["elapsed_s"]
    if torch is not None and not ctx.lost_context:
        t0 = time.perf_counter()
        ctx.ceilings["after"] = {k: v for k, v in roofline.measure_ceilings(torch, ctx.flush).items()
                                 if k.endswith(("_gbps", "_tflops"))}
        timing["roofline_s"] += time.perf_counter() - t0

    predicted = crosscheck.load_predicted(p.predicted) if p.predicted else None
    triton_section = sections.get("triton", {})
    cross = crosscheck.cross_check(
        native_arch=device.get("gpu_arch"), optin_bytes=device.get("smem_optin_bytes"), triton=triton_section,
        boundary=sections.get("boundary", {}), flashinfer=sections.get("flashinfer", {}), predicted=predicted,
        cross_arches=CROSS_TARGET_ARCHES)
    rows = [row for name in p.backends for row in sections[name].get("rows", [])]
    configs = triton_section.get("configs", [])
    best = summary.best_per_problem(problems, rows) if ctx.ceilings else []
    launch = (triton_section.get("launch_overhead_s") or {}).get("median_s")
    notes = _notes(ctx, triton_section, sections)
    if ctx.ceilings:
        notes += summary.decode_notes(problems, best, ctx.ceilings, launch, device.get("multiprocessor_count"))
    timing.update(_sweep_seconds(problems, triton_section, timing))
    timing["total_s"] = time.perf_counter() - started
    body: dict[str, Any] = {
        "model": p.model,
        "model_config": p.model_config,
        "params": {"parallelism": p.parallelism, "tokens_per_expert": p.tokens_per_expert, "backends": p.backends,
                   "time_budget_s": p.time_budget_s, "predicted": p.predicted},
        "device": device or {"reason": no_device},
        "versions": _versions(torch),
        "problems": [problem.as_dict() for problem in problems],
        "roofline": ctx.ceilings,
        "backends": {name: {k: v for k, v in s.items() if k not in ("rows", "configs")} for name, s in sections.items()},
        "configs": configs,
        "rows": rows,
        "cross_check": cross,
        "best": best,
        "headline": summary.headline(problems, best, ctx.ceilings, cross, configs, device.get("gpu_arch")),
        "notes": notes,
        "timing": timing,
    }
    (Path(out_dir) / "table.txt").write_text(table.render(body), encoding="utf-8")
    if torch is None:
        raise WorkloadError(Exit.NO_DEVICE, f"no CUDA device: {no_device}; only compile-time predictions ran", **body)
    wrong = [r for r in rows if r.get("outcome") == "wrong_result"]
    if wrong or ctx.lost_context:
        body["_exit"] = Exit.CHECK_FAILED
    return body


def _notes(ctx: SweepContext, triton_section: dict, sections: dict) -> list[str]:
    notes = [
        "routing is balanced: every local expert gets tokens_per_expert rows (the sweep measures tiles, not routing skew)",
        "inputs are fresh N(0,1) activations and N(0,1/K) weights per problem; outputs are filled with NaN before the"
        " correctness launch, so a kernel that writes nothing fails it",
        "each timed launch starts after a write of 2x the L2 size, so the weights come from HBM, as in serving",
    ]
    if ctx.lost_context:
        notes.append(f"a sticky CUDA error ended GPU work early: {ctx.lost_context}")
    wrong = [r for r in triton_section.get("rows", []) if r.get("outcome") == "wrong_result"]
    if wrong:
        notes.append(f"{len(wrong)} runs returned wrong results (relative error above"
                     f" {triton_section.get('rel_error_tolerance')}): "
                     + ", ".join(f"{r['problem']}/{r['config']}" for r in wrong[:10]))
    above = [r for r in triton_section.get("rows", []) if r.get("outcome") == "ok" and r["fraction_of_roofline"] > 1]
    if above:
        top = max(above, key=lambda r: r["fraction_of_roofline"])
        notes.append(
            f"{len(above)} runs exceed 100% of the roofline (up to {top['fraction_of_roofline']:.0%},"
            f" {top['problem']} {top['config']} at {top['gbps']:.0f} GB/s): the memory ceiling is the copy bandwidth,"
            f" bytes read plus written by a device-to-device copy ({ctx.ceilings.get('copy_gbps', 0):.0f} GB/s), and a"
            " GEMM that mostly reads streams its weights slightly faster than a copy moves bytes")
    skipped = [r for r in triton_section.get("rows", []) if r.get("outcome") == "skipped"]
    if skipped:
        notes.append(f"{len(skipped)} runs were not made: {skipped[0].get('skip_reason')}")
    return notes


def _sweep_seconds(problems, triton_section: dict, timing: dict) -> dict[str, float]:
    """Wall seconds per parallelism, and what a sweep of EP8 alone would take (its problems, the
    compilation it needs, the roofline)."""
    walls = triton_section.get("problem_wall_s") or {}
    out: dict[str, float] = {}
    for problem in problems:
        key = f"{problem.parallelism}_problems_s"
        out[key] = out.get(key, 0.0) + walls.get(problem.id, 0.0)
    if "compile_s" in triton_section:
        out["triton_compile_s"] = triton_section["compile_s"]
        for key in [k for k in out if k.endswith("_problems_s")]:
            out[key.replace("_problems_s", "_sweep_s")] = (
                out[key] + triton_section["compile_s"] + timing.get("roofline_s", 0.0))
    return out
