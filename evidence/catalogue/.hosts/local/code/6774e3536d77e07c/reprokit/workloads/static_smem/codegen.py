"""Probe programs generated from the wheel's own sources.

Two host-only programs (nvcc compiles them; they run on any CPU):

1. The *tactics* program asks FlashInfer's runner for its tactic list
   (``CutlassMoeFCRunner<...>::getTactics(sm, GEMM_1/GEMM_2)``, the code behind
   the autotuner's tactic ints) and sends every tactic through the real
   dispatcher (``dispatchMoeGemmSelectTileShapeTmaWarpSpecialized``), exactly as
   FlashInfer does when it sizes workspaces. The launcher template the
   dispatcher calls is defined here to record its template arguments instead
   of launching, so the tile the dispatcher picks (K converted from bytes to
   elements by its ``SHAPE_CASE``), the fusion and the swap come from the wheel.

2. The *kernel* programs instantiate ``INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM``
   from the wheel's ``moe_gemm_tma_ws_launcher.inl``, patched in one place: the
   runtime half of the launcher (arguments, workspace, ``initialize``, ``run``)
   is cut after ``using GemmGrouped = ...`` and replaced by a call that prints
   ``sizeof`` of the kernel's, mainloop's and epilogue's SharedStorage, the stage
   count and the types. Every type is composed by the launcher's own text.

The C++ is C++: the programs and headers are files under ``cxx/`` (shipped as package
data), the programs ``string.Template`` files whose ``${...}`` this module fills;
``tests/unit/smem/test_cxx_templates.py`` compiles the headers on their own.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from string import Template

from reprokit.workloads.static_smem import sources
from reprokit.workloads.static_smem.sources import SourceError
from reprokit.workloads.static_smem.targets import ArchTarget, MoeDtype

GEMM_GROUPED = "using GemmGrouped = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;"
FAST_BUILD_THROW = 'TLLM_THROW("Configuration was disabled by FAST_BUILD");'
MAINLOOP_BUILDER = re.compile(
    r"using CollectiveMainloop = typename (cutlass::gemm::collective::\s*(?:\\\s*)?CollectiveBuilder<.*?>)::CollectiveOp;",
    re.S)
LAUNCHER_DECL = re.compile(
    r"template\s*<(?P<tparams>[^;{]*?)>\s*void\s+tma_warp_specialized_generic_moe_gemm_kernelLauncher\s*\((?P<params>[^;{]*?)\)\s*;",
    re.S)

CXX = Path(__file__).resolve().parent / "cxx"
# The probe headers, copied as they are next to the generated programs (cxx/*.h; no placeholders).
SUPPORT_HEADERS = ("reprokit_probe_common.h", "reprokit_probe_kernel.h")
# TensorRT-LLM's cudaUtils.h includes the cuBLAS headers for one error-string helper
# (_cudaGetErrorEnum(cublasStatus_t)). A CUDA toolkit without cuBLAS (as on CI) lacks
# them; cxx/shim/ declares just that enum. It sits after every real include
# directory (-idirafter), so an installed cuBLAS wins. No kernel type depends on it.
SHIM_HEADERS = ("cublas_v2.h", "cublasLt.h")
TEMPLATE_NOTE = "//!"  # a template's own notes: lines that start with it are not written out


def template(name: str) -> Template:
    """``cxx/<name>``, a C++ file with ``${...}`` placeholders, without its ``//!`` note lines."""
    text = (CXX / name).read_text(encoding="utf-8")
    return Template("".join(line for line in text.splitlines(keepends=True) if not line.startswith(TEMPLATE_NOTE)))


RECORD_CALL = (
    "::reprokit_probe::record_kernel<ArchTag, GemmKernel, CollectiveMainloop, CollectiveEpilogue, "
    "ReprokitMainloopBuilder, StageCountAutoCarveout, KernelSchedule, EpilogueSchedule, MmaTileShape, "
    "ClusterShape, SwappedMainloopElementA, SwappedMainloopElementB, ElementSF, ElementD, ElementFinalOutput, "
    "LayoutA, LayoutB, LayoutC, LayoutD, TensorOp, EpilogueOp, EpilogueFusionOp>("
    "#DataType_, #WeightType_, #OutputType_, IsFinalizeFusion, SwapAB, CTA_M_, CTA_N_, CTA_K_, "
    "SwappedAlignmentA, SwappedAlignmentB, AlignmentC, AlignmentD);"
)


def _macro_line(code: str, indent: str = "      ") -> str:
    return f"{indent}{code} \\\n"


def patch_launcher_for_sizes(inl: str) -> str:
    """The launcher with its runtime half replaced by a size report (see the module docstring)."""
    start = inl.find(GEMM_GROUPED)
    if start < 0:
        raise SourceError(f"{sources.LAUNCHER}: no '{GEMM_GROUPED}'; this launcher layout is not supported")
    cut_from = inl.index("\n", start) + 1
    throw = inl.find(FAST_BUILD_THROW, cut_from)
    if throw < 0:
        raise SourceError(f"{sources.LAUNCHER}: no FAST_BUILD branch after GemmGrouped; this launcher layout is not supported")
    else_at = inl.rfind("} else {", cut_from, throw)
    cut_to = inl.rfind("\n", 0, else_at) + 1
    removed = sources.strip_comments(inl[cut_from:cut_to])
    if removed.count("{") != removed.count("}"):
        raise SourceError(f"{sources.LAUNCHER}: the runtime part after GemmGrouped is not a closed block")
    builder = MAINLOOP_BUILDER.search(inl)
    if not builder:
        raise SourceError(f"{sources.LAUNCHER}: no 'using CollectiveMainloop = ...CollectiveBuilder<...>::CollectiveOp;'")
    builder_expr = re.sub(r"\s+", " ", re.sub(r"/\*\*/|\\\n", " ", builder.group(1)))
    after_builder = inl.index("\n", builder.end()) + 1
    patched = (inl[:after_builder]
               + _macro_line(f"using ReprokitMainloopBuilder = {builder_expr};")
               + inl[after_builder:cut_from]
               + _macro_line(RECORD_CALL)
               + inl[cut_to:])
    return "// Generated by reprokit from the wheel's moe_gemm_tma_ws_launcher.inl: the runtime half of the\n" \
           "// launcher is replaced by reprokit_probe::record_kernel; the type composition is unchanged.\n" + patched


@dataclass(frozen=True)
class LauncherSignature:
    template_params: list[tuple[str, str]]  # (declaration, name)
    params: list[tuple[str, str]]

    def names(self) -> list[str]:
        return [name for _, name in self.template_params]


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for c in text:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
    if current.strip():
        parts.append(current.strip())
    return parts


def launcher_signature(launcher_h: str) -> LauncherSignature:
    match = LAUNCHER_DECL.search(sources.strip_comments(launcher_h))
    if not match:
        raise SourceError(f"{sources.LAUNCHER_DECL}: no declaration of tma_warp_specialized_generic_moe_gemm_kernelLauncher")

    def named(parts: list[str]) -> list[tuple[str, str]]:
        return [(" ".join(p.split()), re.findall(r"\w+", p)[-1]) for p in parts]

    return LauncherSignature(named(_split_top_level(match["tparams"])), named(_split_top_level(match["params"])))


def recording_launcher(signature: LauncherSignature) -> str:
    """A definition of the launcher template that records its arguments instead of launching."""
    lines = []
    for declaration, name in signature.template_params:
        if declaration.startswith(("typename", "class")):
            lines.append(f'  j.str("{name}", ::reprokit_probe::describe<{name}>());')
        elif declaration.startswith("bool"):
            lines.append(f'  j.boolean("{name}", {name});')
        elif "EpilogueFusion" in declaration:
            lines.append(f'  j.str("{name}", ::reprokit_probe::fusion_name({name}));')
        else:
            lines.append(f'  j.num("{name}", (long long){name});')
    return template("recording_launcher.h").substitute(
        tparams=", ".join(d for d, _ in signature.template_params),
        params=", ".join(d for d, _ in signature.params),
        body="\n".join(lines), input_name=signature.params[0][1])


def tactics_program(launcher_h: str, arch: ArchTarget, dtype: MoeDtype, output_cpp_types: dict[str, str]) -> str:
    """The tactics program (see the module docstring)."""
    signature = launcher_signature(launcher_h)
    tile_member = "tile_config_sm" + ("120" if arch.sm >= 120 else str(arch.sm))
    outputs = "\n".join(f'  run_output<{cpp}>("{name}");' for name, cpp in output_cpp_types.items())
    return template("tactics_program.cu").substitute(
        recording_launcher=recording_launcher(signature), act=dtype.act_cpp, weight=dtype.weight_cpp, sm=arch.sm,
        tile_member=tile_member, scaling_type=dtype.scaling_type, outputs=outputs)


@dataclass(frozen=True)
class KernelVariant:
    """One launcher instantiation: what INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM receives."""

    arch_tag: str  # "Sm120"
    act_token: str  # "SafeFP4"
    weight_token: str
    output: str  # "bf16"
    output_cpp: str  # "__nv_bfloat16"
    epilogue_schedule: str  # "void" on SM120 (the launcher hard-codes it)
    fusion: str  # "NONE" / "FINALIZE"
    cta: tuple[int, int, int]
    cluster: tuple[int, int, int]
    is_mx_fpx: bool
    dynamic_cga: bool
    swap_ab: bool

    @property
    def key(self) -> str:
        m, n, k = self.cta
        parts = [f"{m}x{n}x{k}", self.fusion, "swap" if self.swap_ab else "noswap", self.output]
        if self.epilogue_schedule != "void":
            parts.append(self.epilogue_schedule)
        if self.cluster != (1, 1, 1) or self.dynamic_cga:
            parts.append("c" + "x".join(map(str, self.cluster)) + ("dyn" if self.dynamic_cga else ""))
        return "-".join(parts)

    def instantiation(self) -> str:
        b = lambda v: "true" if v else "false"  # noqa: E731
        return (f"INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM({self.arch_tag}, {self.act_token}, {self.weight_token}, "
                f"{self.output_cpp}, {self.epilogue_schedule}, EpilogueOpDefault, {self.fusion}, "
                f"{self.cta[0]}, {self.cta[1]}, {self.cta[2]}, {self.cluster[0]}, {self.cluster[1]}, {self.cluster[2]}, "
                f"{b(self.is_mx_fpx)}, {b(self.dynamic_cga)}, false, {b(self.swap_ab)});")

    def call(self, act_cpp: str, weight_cpp: str) -> str:
        b = lambda v: "true" if v else "false"  # noqa: E731
        schedule = "void" if self.epilogue_schedule == "void" else f"cutlass::epilogue::{self.epilogue_schedule}"
        shape = lambda s: "cute::Shape<" + ", ".join(f"cute::Int<{v}>" for v in s) + ">"  # noqa: E731
        return (f"  input.swap_ab = {b(self.swap_ab)};\n"
                f"  tma_warp_specialized_generic_moe_gemm_kernelLauncher<cutlass::arch::{self.arch_tag}, {act_cpp}, "
                f"{weight_cpp}, {self.output_cpp}, {schedule}, tensorrt_llm::cutlass_extensions::EpilogueOpDefault, "
                f"EpilogueFusion::{self.fusion}, {shape(self.cta)}, {shape(self.cluster)}, {b(self.is_mx_fpx)}, "
                f"{b(self.dynamic_cga)}, false, {b(self.swap_ab)}>(input, 1, 1, nullptr, nullptr, nullptr, {{}}, {{}});\n")


def kernel_program(variants: list[KernelVariant], arch: ArchTarget, dtype: MoeDtype) -> str:
    """One kernel program: the patched launcher, instantiated for ``variants`` the way generate_kernels.py does."""
    instantiations = "\n".join(v.instantiation() for v in variants)
    calls = "".join(v.call(dtype.act_cpp, dtype.weight_cpp) for v in variants)
    return template("kernel_program.cu").substitute(
        capacity_symbol=arch.capacity_symbol, instantiations=instantiations, calls=calls)


def write_support_files(directory: Path, launcher_inl: str) -> None:
    """The headers every kernel/tactics program includes, next to the programs."""
    (directory / "shim").mkdir(parents=True, exist_ok=True)
    for name in SUPPORT_HEADERS:
        shutil.copyfile(CXX / name, directory / name)
    for name in SHIM_HEADERS:
        shutil.copyfile(CXX / "shim" / name, directory / "shim" / name)
    (directory / "moe_gemm_tma_ws_launcher_sizes.inl").write_text(patch_launcher_for_sizes(launcher_inl))
