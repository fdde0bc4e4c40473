"""The probes' C++ as C++ files: each template's placeholders are exactly what codegen fills, the output is the
program the tree wrote when the C++ was Python strings, and nvcc compiles (and runs) the headers on their own."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from reprokit.workloads.static_smem import codegen
from reprokit.workloads.static_smem.codegen import CXX, KernelVariant
from reprokit.workloads.static_smem.options import Options
from reprokit.workloads.static_smem.targets import ARCHES, DTYPES, OUTPUT_DTYPES
from reprokit.workloads.static_smem.workload import Analysis

LAUNCHER_H = """template <typename ArchTag, typename T, typename WeightType, typename OutputType, typename EpilogueSchedule,
 typename EpilogueTag, TmaWarpSpecializedGroupedGemmInput::EpilogueFusion FUSION, typename TileShape,
 typename ClusterShape, bool IsMXFPX, bool DYNAMIC_CGA, bool BIAS, bool SwapAB>
void tma_warp_specialized_generic_moe_gemm_kernelLauncher(TmaWarpSpecializedGroupedGemmInput tma_ws_input,
 int num_experts, int multi_processor_count, cudaStream_t stream, int* kernel_occupancy, size_t* workspace_size,
 cute::Shape<int, int, cute::_1> dynamic_cluster_shape, cute::Shape<int, int, cute::_1> fallback_cluster_shape);"""
VARIANT = KernelVariant("Sm120", "SafeFP4", "SafeFP4", "bf16", "__nv_bfloat16", "void", "FINALIZE",
                        (256, 128, 128), (1, 1, 1), False, False, False)


def test_each_template_has_exactly_the_placeholders_codegen_fills() -> None:
    placeholders = {name: set(codegen.template(name).get_identifiers())
                    for name in ("recording_launcher.h", "tactics_program.cu", "kernel_program.cu")}
    assert placeholders == {
        "recording_launcher.h": {"tparams", "params", "body", "input_name"},
        "tactics_program.cu": {"recording_launcher", "act", "weight", "sm", "tile_member", "scaling_type", "outputs"},
        "kernel_program.cu": {"capacity_symbol", "instantiations", "calls"},
    }
    # the copied headers have none: they are written out as they are
    for name in (*codegen.SUPPORT_HEADERS, *(f"shim/{n}" for n in codegen.SHIM_HEADERS)):
        assert "${" not in (CXX / name).read_text(), name


def test_the_programs_are_the_bytes_the_python_strings_wrote() -> None:
    """sha256 of what codegen wrote before the C++ moved to cxx/ (968a3f0): the object cache keys hold."""
    tactics = codegen.tactics_program(LAUNCHER_H, ARCHES["sm120"], DTYPES["nvfp4"],
                                      {o: OUTPUT_DTYPES[o] for o in DTYPES["nvfp4"].output_dtypes})
    kernels = codegen.kernel_program([VARIANT], ARCHES["sm120"], DTYPES["nvfp4"])
    assert "//!" not in tactics + kernels and "${" not in tactics + kernels
    assert tactics.count("j.str(\"ArchTag\", ::reprokit_probe::describe<ArchTag>());") == 1
    assert hashlib.sha256(tactics.encode()).hexdigest() == TACTICS_SHA256
    assert hashlib.sha256(kernels.encode()).hexdigest() == KERNELS_SHA256


def test_support_files_are_the_cxx_files(tmp_path: Path) -> None:
    inl = ("a\n  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<X>::CollectiveOp; \\\n"
           "  using GemmGrouped = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>; \\\n  {run(); } \\\n"
           "  } else { \\\n  TLLM_THROW(\"Configuration was disabled by FAST_BUILD\"); \\\n  }\n")
    codegen.write_support_files(tmp_path, inl)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["moe_gemm_tma_ws_launcher_sizes.inl", "reprokit_probe_common.h", "reprokit_probe_kernel.h",
                       "shim/cublasLt.h", "shim/cublas_v2.h"]
    assert (tmp_path / "reprokit_probe_kernel.h").read_bytes() == (CXX / "reprokit_probe_kernel.h").read_bytes()


COMMON_MAIN = r"""#include "reprokit_probe_common.h"
int main() {
  reprokit_probe::Json j;
  j.num("n", 3);
  j.str("s", "a\"b\n");
  j.boolean("b", true);
  j.raw("r", "");
  j.str("shape", reprokit_probe::describe<cute::Shape<cute::Int<128>, cute::Int<256>>>());
  std::printf("%s\n", j.done().c_str());
  return 0;
}
"""
KERNEL_ALONE = """#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/pipeline/pipeline.hpp"
#define REPROKIT_CAPACITY_SYMBOL cutlass::arch::sm120_smem_capacity_bytes
#define REPROKIT_CAPACITY_NAME "cutlass::arch::sm120_smem_capacity_bytes"
#include "reprokit_probe_kernel.h"
"""


@pytest.mark.network
def test_nvcc_compiles_the_headers_on_their_own(tmp_path: Path, fetch_wheel, nvcc) -> None:
    """Each header in one translation unit of its own, with the wheel's CUTLASS: the common one runs."""
    options = Options.from_params({"flashinfer": "0.6.3", "wheel": str(fetch_wheel("0.6.3").path),
                                   "cache_dir": str(tmp_path / "cache")})
    analysis = Analysis(options, tmp_path / "run")
    analysis._prepare_probe_dir()
    flags = [f for f in analysis.flags() if not f.startswith("-gencode")]
    (tmp_path / "common_main.cu").write_text(COMMON_MAIN)
    (tmp_path / "kernel_alone.cu").write_text(KERNEL_ALONE)
    built = subprocess.run([str(nvcc.path), *flags, "-o", str(tmp_path / "common_main"), str(tmp_path / "common_main.cu")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    ran = subprocess.run([str(tmp_path / "common_main")], capture_output=True, text=True)
    assert (ran.returncode, ran.stdout) == (0, '{"n":3,"s":"a\\"b\\n","b":true,"r":null,"shape":"128x256"}\n')
    checked = subprocess.run([str(nvcc.path), *flags, "-c", "-o", str(tmp_path / "kernel_alone.o"), str(tmp_path / "kernel_alone.cu")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr[-2000:]


TACTICS_SHA256 = "eee60741388f8b06478f24515199f228a8d1846e8b57fa69eaa315b37d8c5eaa"
KERNELS_SHA256 = "1f60926b211a1cd4cd8d39a4e0f7e2ae21b421348c3c1978a88bc721c9bd887e"
