"""FlashInfer's SM90 CUTLASS fused-MoE module, built for one dtype only: the release's own JitSpec, fewer sources.

Why: the whole module (``gen_cutlass_fused_moe_sm90_module``) compiles every dtype's grouped GEMMs (181 objects in
0.6.3, about 38 minutes on 16 cores), longer than a GPU host is lent in one stretch. A per-tactic check of one
dtype needs only that dtype's kernels.

How, so that the check still runs the release's own launch path:
- The release's generator writes its kernel files and the release's ``gen_cutlass_fused_moe_sm90_module`` returns
  its JitSpec as usual; the reduced spec is that spec with ``dataclasses.replace(name=..., sources=subset)``, so
  every nvcc flag, define (``-DENABLE_BF16 -DENABLE_FP8 -DENABLE_FP4 ...``), include path and link flag is the
  release's own.
- Kept: the generated grouped-GEMM files (SM90 TMA warp-specialized and SM80 fallback) that instantiate a kernel
  with activation and weight of the dtype; the dtype's ``moe_gemm_kernels_<a>_<w>.cu`` (its ``MoeGemmRunner``);
  the binding; ``deepgemm_jit_setup.cu`` (the loader calls it); and every source that is not per dtype (TMA WS
  input, heuristic, common utilities, LoRA, pre-quant kernel), and ``cutlass_fused_moe_instantiation.cu`` as it is.
- Left out: the other dtypes' generated files and ``moe_gemm_kernels_*.cu``, the mixed-input utilities, and the
  dense SM90 GEMMs (``gemm/90``: not MoE). ``fp8_blockscale_gemm.cu`` stays: the runner holds a
  ``CutlassFp8BlockScaleGemmRunner<__nv_bfloat16, __nv_fp8_e4m3, ...>`` whose vtable entry ``gemm`` is resolved at
  ``dlopen`` (measured on an H200, 2026-12-02: without it the load failed on that symbol).
- The other dtypes' ``MoeGemmRunner`` members stay undefined in the shared object: the linker allows that for
  ``-shared``, ``tvm_ffi.load_module`` opens it with ``RTLD_LAZY``, and they are reached only through direct calls
  (PLT entries, resolved on first call), which the dtype's path never makes (``undefined_symbols`` lists them).
- Not so the runners: the instantiation file cannot be cut to the dtype's ``CutlassMoeFCRunner``. The binding
  constructs every dtype's runner (``std::make_shared<CutlassMoeFCRunner<half, half>>``), so its object holds
  their vtables, whose entries are data relocations resolved at load time. Measured on an H200 (FlashInfer
  0.6.18): with only ``CutlassMoeFCRunner<__nv_bfloat16, __nv_bfloat16>`` kept, ``dlopen`` failed with
  ``undefined symbol: ...CutlassMoeFCRunner<__half, __half, ...>::getWorkspaceSize``.

``install`` puts the reduced spec in place of ``gen_cutlass_fused_moe_sm90_module`` in ``flashinfer.fused_moe.core``,
so ``get_cutlass_fused_moe_module("90")`` (the release's loader, its ``MoERunner``, its autotuner) loads it.
Runs on the GPU host: torch and flashinfer only.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

ACT_WEIGHT = {  # dtype -> (TMA WS spelling, SM80 launcher spelling, moe_gemm_kernels file)
    "bf16": ("__nv_bfloat16", "cutlass::bfloat16_t", "moe_gemm_kernels_bf16_bf16.cu"),
    "fp8": ("__nv_fp8_e4m3", "cutlass::float_e4m3_t", "moe_gemm_kernels_fp8_fp8.cu"),
}
PER_DTYPE_HANDWRITTEN = re.compile(r"^(moe_gemm_kernels_\w+\.cu|moe_gemm_mixed_utils\.cu)$")


def generated_file_dtypes(path: Path) -> set[tuple[str, str]]:
    """The (activation, weight) pairs a generated kernel file instantiates."""
    text = path.read_text(errors="replace")
    pairs = {(a.strip(), w.strip()) for a, w in
             re.findall(r"INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM\(\s*\w+\s*,\s*([\w:]+)\s*,\s*([\w:]+)", text)}
    pairs |= {(a.strip(), w.strip()) for a, w in
              re.findall(r"sm80_generic_fused_moe_gemm_kernelLauncher<\s*([\w:]+)\s*,\s*([\w:]+)", text)}
    return pairs


def reduced_spec(dtype: str = "bf16") -> tuple[Any, dict[str, Any]]:
    """The reduced JitSpec and what was kept and left out (counts and names)."""
    from flashinfer.jit import fused_moe as jit_fused_moe  # noqa: PLC0415

    full = jit_fused_moe.gen_cutlass_fused_moe_sm90_module()
    act, sm80_act, gemm_file = ACT_WEIGHT[dtype]
    wanted = {(act, act), (sm80_act, sm80_act)}
    kept: list[Path] = []
    left_out: dict[str, list[str]] = {"generated_other_dtypes": [], "generated_dense_gemm": [],
                                      "handwritten_other_dtypes": []}
    for source in full.sources:
        name = source.name
        if name.endswith(".generated.cu"):
            if "/gemm_grouped/" not in source.as_posix():
                left_out["generated_dense_gemm"].append(name)
            elif generated_file_dtypes(source) & wanted:
                kept.append(source)
            else:
                left_out["generated_other_dtypes"].append(name)
        elif PER_DTYPE_HANDWRITTEN.match(name) and name != gemm_file:
            left_out["handwritten_other_dtypes"].append(name)
        else:
            kept.append(source)
    # -z lazy: the other dtypes' runners are resolved on first call only (a toolchain may default to -z now).
    spec = dataclasses.replace(full, name=f"fused_moe_90_reprokit_{dtype}", sources=kept,
                               extra_ldflags=[*(full.extra_ldflags or []), "-Wl,-z,lazy"])
    facts = {"module": spec.name, "full_module": full.name, "full_objects": len(full.sources),
             "objects": len(kept), "kept": [p.name for p in kept],
             "kept_generated": sum(p.name.endswith(".generated.cu") for p in kept),
             "left_out": {k: sorted(v) for k, v in left_out.items()},
             "left_out_counts": {k: len(v) for k, v in left_out.items()},
             "nvcc_flags_unchanged": spec.extra_cuda_cflags == full.extra_cuda_cflags}
    return spec, facts


def install(dtype: str = "bf16") -> dict[str, Any]:
    """Make the release's own loader (``get_cutlass_fused_moe_module("90")``) build and load the reduced module."""
    from flashinfer.fused_moe import core  # noqa: PLC0415

    spec, facts = reduced_spec(dtype)
    core.gen_cutlass_fused_moe_sm90_module = lambda use_fast_build=False: spec
    core.get_cutlass_fused_moe_module.cache_clear()
    facts["library"] = str(spec.get_library_path())
    facts["build_dir"] = str(spec.build_dir)
    return facts


def undefined_symbols(library: Path) -> dict[str, Any]:
    """The C++ symbols the shared object leaves to lazy binding (other dtypes' runners), counted and sampled."""
    import subprocess  # noqa: PLC0415

    try:
        done = subprocess.run(["nm", "-D", "--undefined-only", "-C", str(library)], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)}
    ours = [line.split(None, 1)[-1] for line in done.stdout.splitlines() if "tensorrt_llm::" in line]
    runners = sorted({m.group(0) for line in ours for m in re.finditer(r"CutlassMoeFCRunner<[^()]*?>|MoeGemmRunner<[^()]*?>", line)})
    return {"tensorrt_llm_undefined": len(ours), "classes": runners[:40], "sample": ours[:12]}
