#pragma once
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
