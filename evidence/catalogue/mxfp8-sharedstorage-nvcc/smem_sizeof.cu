// sizeof the SharedStorage of FlashInfer 0.6.18's SM120 MXFP8 GEMM kernels, from the wheel's own headers.
#include <cstdio>
#include <cuda_bf16.h>
#include "flashinfer/gemm/mxfp8_gemm_cutlass_template_sm120.h"
namespace flashinfer { namespace gemm {
INSTANTIATE_MXFP8_GEMM_KERNEL_LAUNCHER_SM120(__nv_bfloat16, 256, 128, 128, false)
INSTANTIATE_MXFP8_GEMM_KERNEL_LAUNCHER_SM120(__nv_bfloat16, 128, 256, 128, false)
INSTANTIATE_MXFP8_GEMM_KERNEL_LAUNCHER_SM120(__nv_bfloat16, 128, 128, 128, false)
}}
using namespace flashinfer::gemm;
template <class D> void show(const char* tile) {
  using K = typename D::GemmKernel;
  std::printf("%s kernel %zu mainloop %zu epilogue %zu\n", tile, sizeof(typename K::SharedStorage),
              sizeof(typename D::CollectiveMainloop::SharedStorage), sizeof(typename D::CollectiveEpilogue::SharedStorage));
}
int main() {
  show<DeviceGemmMxfp8GemmSm120___nv_bfloat16_256_128_128false>("256x128x128");
  show<DeviceGemmMxfp8GemmSm120___nv_bfloat16_128_256_128false>("128x256x128");
  show<DeviceGemmMxfp8GemmSm120___nv_bfloat16_128_128_128false>("128x128x128");
}
