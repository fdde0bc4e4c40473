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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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

# Shared C++ helpers: type names, shapes, a tiny JSON writer.
PROBE_COMMON_H = r"""#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include "cute/tensor.hpp"

namespace reprokit_probe {

template <class T>
std::string type_name() {
  std::string_view p = __PRETTY_FUNCTION__;  // "... [with T = <type>; std::string = ...]"
  auto start = p.find("T = ") + 4;
  auto end = p.find_first_of(";]", start);
  return std::string(p.substr(start, end - start));
}

template <class T, class = void>
struct is_cute_tuple : std::false_type {};
template <class T>
struct is_cute_tuple<T, std::enable_if_t<cute::is_tuple<T>::value>> : std::true_type {};

// "128x256x128" for a static cute shape, "dynamic" for a runtime one, else the type's name.
template <class T>
std::string describe() {
  if constexpr (is_cute_tuple<T>::value) {
    if constexpr (cute::is_static_v<T>) {
      std::string out;
      cute::for_each(cute::make_seq<cute::rank_v<T>>{}, [&](auto i) {
        if (!out.empty()) out += "x";
        out += std::to_string(int(cute::size<decltype(i)::value>(T{})));
      });
      return out;
    } else {
      return "dynamic";
    }
  } else {
    return type_name<T>();
  }
}

inline std::string escape(std::string const& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return out;
}

struct Json {
  std::string text = "{";
  void key(char const* k) { text += (text.size() > 1 ? ",\"" : "\""); text += k; text += "\":"; }
  void num(char const* k, long long v) { key(k); text += std::to_string(v); }
  void str(char const* k, std::string const& v) { key(k); text += "\"" + escape(v) + "\""; }
  void boolean(char const* k, bool v) { key(k); text += v ? "true" : "false"; }
  void raw(char const* k, std::string const& v) { key(k); text += v.empty() ? "null" : v; }
  std::string done() const { return text + "}"; }
};

}  // namespace reprokit_probe
"""

# Kernel sizes: called from inside the patched launcher, where every alias it names exists.
PROBE_KERNEL_H = r"""#pragma once
#include "reprokit_probe_common.h"

namespace reprokit_probe {

#define REPROKIT_HAS_TYPE(NAME)                                                        \
  template <class T, class = void> struct has_##NAME : std::false_type {};             \
  template <class T> struct has_##NAME<T, std::void_t<typename T::NAME>> : std::true_type {};
REPROKIT_HAS_TYPE(TensorStorage)
REPROKIT_HAS_TYPE(PipelineStorage)
REPROKIT_HAS_TYPE(DispatchPolicy)
REPROKIT_HAS_TYPE(Schedule)
#define REPROKIT_HAS_MEMBER(NAME)                                                     \
  template <class T, class = void> struct has_member_##NAME : std::false_type {};      \
  template <class T>                                                                   \
  struct has_member_##NAME<T, std::void_t<decltype(std::declval<T&>().NAME)>> : std::true_type {};
REPROKIT_HAS_MEMBER(tensors)
REPROKIT_HAS_MEMBER(pipelines)
REPROKIT_HAS_MEMBER(scheduler_response)
REPROKIT_HAS_MEMBER(tensormaps)

template <class B, class = void>
struct is_sm120_blockscaled_builder : std::false_type {};
template <class B>
struct is_sm120_blockscaled_builder<
    B, std::void_t<typename B::SmemAllocTypeA, typename B::SmemAllocTypeB,
                   typename B::SmemLayoutAtomSFA, typename B::SmemLayoutAtomSFB,
                   decltype(B::PipelineStages)>> : std::true_type {};

template <class B, class = void>
struct is_sm100_blockscaled_builder : std::false_type {};
template <class B>
struct is_sm100_blockscaled_builder<
    B, std::void_t<typename B::ElementAMma_SmemAllocType, typename B::ElementBMma_SmemAllocType,
                   typename B::SmemTileShape, typename B::SmemLayoutAtomSFA, typename B::SmemLayoutAtomSFB,
                   decltype(B::Sm100ReducedSmemCapacityBytes), decltype(B::KernelSmemCarveout),
                   decltype(B::PipelineStages)>> : std::true_type {};

// Per-stage bytes, term by term, as the block-scaled builders' own stage function sums them, and
// that function (cutlass::gemm::collective::detail::sm100_compute_stage_count_or_override_blockscaled)
// called again with the builder's types: its result must equal the builder's PipelineStages.
template <int Capacity, class AllocA, class AllocB, class TileShape, class SFA, class SFB, int Carveout>
void blockscaled_stages(Json& j) {
  using namespace cute;
  constexpr long long a = cutlass::bits_to_bytes(cute::sizeof_bits_v<AllocA> * size<0>(TileShape{}) * size<2>(TileShape{}));
  constexpr long long b = cutlass::bits_to_bytes(cute::sizeof_bits_v<AllocB> * size<1>(TileShape{}) * size<2>(TileShape{}));
  constexpr long long sfa = size(filter_zeros(SFA{}));
  constexpr long long sfb = size(filter_zeros(SFB{}));
  constexpr long long barrier = sizeof(typename cutlass::PipelineTmaUmmaAsync<1>::SharedStorage);
  constexpr int stages = cutlass::gemm::collective::detail::sm100_compute_stage_count_or_override_blockscaled<
      Capacity, AllocA, AllocB, TileShape, SFA, SFB>(cutlass::gemm::collective::StageCountAutoCarveout<Carveout>{});
  j.str("stage_formula", "cutlass::gemm::collective::detail::sm100_compute_stage_count_or_override_blockscaled");
  j.num("builder_capacity_bytes", Capacity);
  j.num("stage_a_bytes", a);
  j.num("stage_b_bytes", b);
  j.num("stage_sfa_bytes", sfa);
  j.num("stage_sfb_bytes", sfb);
  j.num("stage_barrier_bytes", barrier);
  j.num("stage_bytes", a + b + sfa + sfb + barrier);
  j.num("stages_recomputed", stages);
  j.str("smem_alloc_type_a", type_name<AllocA>());
  j.str("smem_alloc_type_b", type_name<AllocB>());
}

template <class Builder, class TileShape, int Capacity, int Carveout>
void stage_arithmetic(Json& j) {
  if constexpr (is_sm120_blockscaled_builder<Builder>::value) {
    // SM120: the builder sizes stages against the arch capacity minus the epilogue carveout only.
    blockscaled_stages<Capacity, typename Builder::SmemAllocTypeA, typename Builder::SmemAllocTypeB, TileShape,
                       typename Builder::SmemLayoutAtomSFA, typename Builder::SmemLayoutAtomSFB, Carveout>(j);
    j.num("builder_kernel_carveout_bytes", 0);
    j.num("builder_pipeline_stages", Builder::PipelineStages);
  } else if constexpr (is_sm100_blockscaled_builder<Builder>::value) {
    // SM100: the builder also reserves the kernel's own storage (KernelSmemCarveout) first.
    blockscaled_stages<Builder::Sm100ReducedSmemCapacityBytes, typename Builder::ElementAMma_SmemAllocType,
                       typename Builder::ElementBMma_SmemAllocType, typename Builder::SmemTileShape,
                       typename Builder::SmemLayoutAtomSFA, typename Builder::SmemLayoutAtomSFB, Carveout>(j);
    j.num("builder_kernel_carveout_bytes", Builder::KernelSmemCarveout);
    j.num("builder_pipeline_stages", Builder::PipelineStages);
  }
}

template <class ArchTag, class GemmKernel, class CollectiveMainloop, class CollectiveEpilogue,
          class MainloopBuilder, class StageCount, class KernelScheduleRequested, class EpilogueSchedule,
          class MmaTileShape, class ClusterShape, class ElementA, class ElementB, class ElementSF,
          class ElementD, class ElementFinalOutput, class LayoutA, class LayoutB, class LayoutC,
          class LayoutD, class TensorOp, class EpilogueOp, class EpilogueFusionOp>
void record_kernel(char const* act, char const* weight, char const* output, bool finalize, bool swap_ab,
                   int cta_m, int cta_n, int cta_k, int alignment_a, int alignment_b, int alignment_c,
                   int alignment_d) {
  using SharedStorage = typename GemmKernel::SharedStorage;
  constexpr int capacity = REPROKIT_CAPACITY_SYMBOL;
  Json j;
  j.str("kind", "kernel");
  j.str("arch_tag", type_name<ArchTag>());
  j.str("act", act);
  j.str("weight", weight);
  j.str("output", output);
  j.str("fusion", finalize ? "FINALIZE" : "NONE");
  j.boolean("swap_ab", swap_ab);
  j.str("cta", std::to_string(cta_m) + "x" + std::to_string(cta_n) + "x" + std::to_string(cta_k));
  j.str("mma_tile", describe<MmaTileShape>());
  j.str("cluster", describe<ClusterShape>());
  j.num("stages", CollectiveMainloop::DispatchPolicy::Stages);
  j.num("carveout_bytes", StageCount::bytes);
  j.str("stage_count_type", type_name<StageCount>());
  j.num("mainloop_smem_bytes", sizeof(typename CollectiveMainloop::SharedStorage));
  if constexpr (has_TensorStorage<CollectiveMainloop>::value)
    j.num("mainloop_tensor_bytes", sizeof(typename CollectiveMainloop::TensorStorage));
  if constexpr (has_PipelineStorage<CollectiveMainloop>::value)
    j.num("mainloop_pipeline_bytes", sizeof(typename CollectiveMainloop::PipelineStorage));
  j.num("epilogue_smem_bytes", sizeof(typename CollectiveEpilogue::SharedStorage));
  j.num("kernel_smem_bytes", sizeof(SharedStorage));
  j.num("kernel_shared_storage_size", GemmKernel::SharedStorageSize);
  j.num("kernel_smem_alignment", alignof(SharedStorage));
  if constexpr (has_member_tensors<SharedStorage>::value)
    j.num("kernel_tensors_bytes", sizeof(std::declval<SharedStorage&>().tensors));
  if constexpr (has_member_pipelines<SharedStorage>::value)
    j.num("kernel_pipelines_bytes", sizeof(std::declval<SharedStorage&>().pipelines));
  if constexpr (has_member_scheduler_response<SharedStorage>::value)
    j.num("kernel_scheduler_response_bytes", sizeof(std::declval<SharedStorage&>().scheduler_response));
  if constexpr (has_member_tensormaps<SharedStorage>::value)
    j.num("kernel_tensormaps_bytes", sizeof(std::declval<SharedStorage&>().tensormaps));
  j.num("capacity_bytes", capacity);
  j.str("capacity_symbol", REPROKIT_CAPACITY_NAME);
  stage_arithmetic<MainloopBuilder, MmaTileShape, capacity, StageCount::bytes>(j);
  j.str("element_a", type_name<ElementA>());
  j.str("element_b", type_name<ElementB>());
  j.str("element_sf", type_name<ElementSF>());
  j.str("element_d", type_name<ElementD>());
  j.str("element_final_output", type_name<ElementFinalOutput>());
  j.str("layout_a", type_name<LayoutA>());
  j.str("layout_b", type_name<LayoutB>());
  j.str("layout_c", type_name<LayoutC>());
  j.str("layout_d", type_name<LayoutD>());
  j.num("alignment_a", alignment_a);
  j.num("alignment_b", alignment_b);
  j.num("alignment_c", alignment_c);
  j.num("alignment_d", alignment_d);
  j.str("tensor_op", type_name<TensorOp>());
  j.str("kernel_schedule_requested", type_name<KernelScheduleRequested>());
  if constexpr (has_Schedule<typename CollectiveMainloop::DispatchPolicy>::value)
    j.str("kernel_schedule", type_name<typename CollectiveMainloop::DispatchPolicy::Schedule>());
  j.str("mainloop_dispatch_policy", type_name<typename CollectiveMainloop::DispatchPolicy>());
  j.str("epilogue_schedule", type_name<EpilogueSchedule>());
  if constexpr (has_DispatchPolicy<CollectiveEpilogue>::value)
    j.str("epilogue_dispatch_policy", type_name<typename CollectiveEpilogue::DispatchPolicy>());
  j.str("epilogue_fusion_op", finalize ? type_name<EpilogueFusionOp>() : type_name<EpilogueOp>());
  j.str("gemm_kernel", type_name<GemmKernel>().substr(0, 120));
  std::printf("%s\n", j.done().c_str());
}

}  // namespace reprokit_probe
"""

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
    input_name = signature.params[0][1]
    tparams = ", ".join(d for d, _ in signature.template_params)
    params = ", ".join(d for d, _ in signature.params)
    body = "\n".join(lines)
    return f"""namespace tensorrt_llm::kernels::cutlass_kernels_oss {{
template <{tparams}>
void tma_warp_specialized_generic_moe_gemm_kernelLauncher({params}) {{
  ::reprokit_probe::Json j;
{body}
  j.boolean("runtime_swap_ab", {input_name}.swap_ab);
  ::reprokit_probe::dispatched = j.done();
}}
}}  // namespace tensorrt_llm::kernels::cutlass_kernels_oss
"""


def tactics_program(launcher_h: str, arch: ArchTarget, dtype: MoeDtype, output_cpp_types: dict[str, str]) -> str:
    """The tactics program (see the module docstring)."""
    signature = launcher_signature(launcher_h)
    tile_member = "tile_config_sm" + ("120" if arch.sm >= 120 else str(arch.sm))
    outputs = "\n".join(f'  run_output<{cpp}>("{name}");' for name, cpp in output_cpp_types.items())
    return f"""// Generated by reprokit: FlashInfer's tactic list and dispatcher, with a recording launcher.
#include "tensorrt_llm/kernels/cutlass_kernels/include/moe_kernels.h"
#include "moe_gemm/moe_gemm_template_dispatch.h"
#include "reprokit_probe_common.h"
#include <exception>

namespace reprokit_probe {{
std::string dispatched;
inline char const* fusion_name(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion f) {{
  using F = tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion;
  return f == F::NONE ? "NONE" : f == F::FINALIZE ? "FINALIZE" : "OTHER";
}}
}}  // namespace reprokit_probe

{recording_launcher(signature)}
using namespace tensorrt_llm::kernels::cutlass_kernels;
namespace oss = tensorrt_llm::kernels::cutlass_kernels_oss;
using Input = TmaWarpSpecializedGroupedGemmInput;
using Config = tensorrt_llm::cutlass_extensions::CutlassGemmConfig;

template <class Output>
void run_output(char const* output_name) {{
  using Runner = CutlassMoeFCRunner<{dtype.act_cpp}, {dtype.weight_cpp}, Output, Output>;
  int tactic = 0;
  for (int gemm : {{1, 2}}) {{
    auto configs = Runner::getTactics({arch.sm}, gemm == 1 ? MoeGemmId::GEMM_1 : MoeGemmId::GEMM_2);
    int index_in_op = 0;
    for (Config const& config : configs) {{
      bool finalize = config.epilogue_fusion_type == Config::EpilogueFusionType::FINALIZE;
      ::reprokit_probe::Json j;
      j.str("kind", "tactic");
      j.str("output", output_name);
      j.num("gemm", gemm);
      j.num("tactic", tactic++);
      j.num("index_in_op", index_in_op++);
      j.num("tile_enum_value", (long long)config.{tile_member});
      j.str("fusion", finalize ? "FINALIZE" : "NONE");
      j.boolean("swap_ab", config.swap_ab);
      j.boolean("is_tma_warp_specialized", config.is_tma_warp_specialized);
      j.num("sm_version", config.sm_version);
      j.num("cluster_shape", (long long)config.cluster_shape);
      j.num("mainloop_schedule", (long long)config.mainloop_schedule);
      j.num("epilogue_schedule", (long long)config.epilogue_schedule);
      j.str("config", config.toString());
      ::reprokit_probe::dispatched.clear();
      std::string error;
      if (config.is_tma_warp_specialized) {{
        Input input{{}};
        input.swap_ab = config.swap_ab;
        input.fpX_block_scaling_type = Input::FpXBlockScalingType::{dtype.scaling_type};
        input.fusion = finalize ? Input::EpilogueFusion::FINALIZE : Input::EpilogueFusion::NONE;
        size_t workspace_bytes = 0;
        try {{
          if (finalize)
            oss::dispatchMoeGemmSelectTileShapeTmaWarpSpecialized<{dtype.act_cpp}, {dtype.weight_cpp}, Output,
                tensorrt_llm::cutlass_extensions::EpilogueOpDefault, Input::EpilogueFusion::FINALIZE>(
                input, 1, config, 1, cudaStream_t{{0}}, nullptr, &workspace_bytes);
          else
            oss::dispatchMoeGemmSelectTileShapeTmaWarpSpecialized<{dtype.act_cpp}, {dtype.weight_cpp}, Output,
                tensorrt_llm::cutlass_extensions::EpilogueOpDefault, Input::EpilogueFusion::NONE>(
                input, 1, config, 1, cudaStream_t{{0}}, nullptr, &workspace_bytes);
        }} catch (std::exception const& exc) {{
          error = exc.what();
        }}
      }}
      j.raw("launcher", ::reprokit_probe::dispatched);
      if (!error.empty()) j.str("dispatch_error", error);
      std::printf("%s\\n", j.done().c_str());
    }}
  }}
}}

int main() {{
{outputs}
  return 0;
}}
"""


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
    return f"""// Generated by reprokit: sizes of FlashInfer's MoE kernels, composed by the wheel's launcher.
#define REPROKIT_CAPACITY_SYMBOL {arch.capacity_symbol}
#define REPROKIT_CAPACITY_NAME "{arch.capacity_symbol}"
#include "moe_gemm_tma_ws_launcher_sizes.inl"
#include "reprokit_probe_kernel.h"

namespace tensorrt_llm::kernels::cutlass_kernels_oss {{
{instantiations}
}}  // namespace tensorrt_llm::kernels::cutlass_kernels_oss

int main() {{
  using namespace tensorrt_llm::kernels::cutlass_kernels_oss;
  tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput input{{}};
{calls}  return 0;
}}
"""


def write_support_files(directory: Path, launcher_inl: str) -> None:
    """The headers every kernel/tactics program includes, next to the programs."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "reprokit_probe_common.h").write_text(PROBE_COMMON_H)
    (directory / "reprokit_probe_kernel.h").write_text(PROBE_KERNEL_H)
    (directory / "moe_gemm_tma_ws_launcher_sizes.inl").write_text(patch_launcher_for_sizes(launcher_inl))
    shim = directory / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "cublas_v2.h").write_text(CUBLAS_SHIM)
    (shim / "cublasLt.h").write_text("#pragma once\n#include <cublas_v2.h>\n")


# TensorRT-LLM's cudaUtils.h includes the cuBLAS headers for one error-string helper
# (_cudaGetErrorEnum(cublasStatus_t)). A CUDA toolkit without cuBLAS (as on CI) lacks
# them; this stand-in declares just that enum. It sits after every real include
# directory (-idirafter), so an installed cuBLAS wins. No kernel type depends on it.
CUBLAS_SHIM = """#pragma once
// reprokit stand-in for cuBLAS (not installed): only what TensorRT-LLM's cudaUtils.h names.
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
"""
