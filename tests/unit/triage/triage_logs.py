"""Build log lines in the upstream formats (see reprokit/triage/formats.py for the sources)."""

from __future__ import annotations

import io

from reprokit.triage.parser import Event, FileParser, FileStats
from reprokit.triage.reader import iter_regions

RUNNER = "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7f3a5c1e2d10>"
INIT_FAILURE = (
    "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal "
    "(cutlass_kernel_file_gemm_grouped_sm120_M128_group3.generated.cu:60)"
)
FUSION_0 = "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion)0"


def sglang(message: str, ranks: str = "", ts: str = "2026-02-19 10:05:12") -> str:
    return f"[{ts}{' ' + ranks if ranks else ''}] {message}"


def flashinfer(message: str, level: str = "WARNING", ts: str = "2026-02-19 10:05:14,502") -> str:
    return f"{ts} - {level} - autotuner.py:465 - flashinfer.jit: {message}"


def dispatch_frame(tile: tuple[int, int, int], fusion: int = 0, swap_ab: bool = False, n: int = 4) -> str:
    m, nn, k = tile
    return (
        f"{n:<3d}     0x7f3a1c42a1c7 void tensorrt_llm::kernels::cutlass_kernels_oss::"
        "dispatchMoeGemmSelectClusterShapeTmaWarpSpecialized<cutlass::arch::Sm120, __nv_fp4_e2m1, __nv_fp4_e2m1, "
        "__nv_bfloat16, tensorrt_llm::cutlass_extensions::EpilogueOpDefault, "
        f"(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion){fusion}, "
        f"cute::tuple<cute::C<{m}>, cute::C<{nn}>, cute::C<{k}> >, {str(swap_ab).lower()}>"
        "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput, int, "
        "tensorrt_llm::cutlass_extensions::CutlassGemmConfig, int, CUstream_st*, int*, unsigned long*) + 689"
    )


def stage_frame(stage: int, n: int = 8) -> str:
    return (
        f"{n:<3d}     0x7f3a1c3f0b21 tensorrt_llm::kernels::cutlass_kernels::CutlassMoeFCRunner<__nv_fp4_e2m1, "
        f"__nv_fp4_e2m1, __nv_bfloat16, __nv_fp4_e2m1, __nv_bfloat16, void>::gemm{stage}(void const*, void*) + 1733"
    )


def skip_record(tactic: int, tile: tuple[int, int, int] = (128, 256, 128), stage: int = 1, fusion: int = 0,
                swap_ab: bool = False, level: str = "WARNING", ts: str = "2026-02-19 10:05:14,502") -> list[str]:
    """FlashInfer's 'Skipping tactic' line for the SM120 init failure, with its TensorRT-LLM backtrace."""
    return [
        flashinfer(f"[Autotuner]: Skipping tactic {RUNNER} {tactic}, due to failure while profiling: {INIT_FAILURE}",
                   level, ts),
        "1       0x7f3a1c3e21b4 tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 82",
        dispatch_frame(tile, fusion, swap_ab, n=2),
        stage_frame(stage, n=3),
        "4       0x5606c2e8d0ba /usr/bin/python3(+0x15e0ba) [0x5606c2e8d0ba]",
    ]


def parse_bytes(data: bytes, *, chunk_bytes: int = 1 << 20, max_line_bytes: int = 1 << 20,
                path: str = "mem.log") -> tuple[list[Event], FileStats]:
    """Parse in-memory bytes through the same reader and parser as a file."""
    stats = FileStats(path=path)
    parser = FileParser(path, stats)
    events: list[Event] = []
    for region in iter_regions(io.BytesIO(data), stats.read, chunk_bytes=chunk_bytes, max_line_bytes=max_line_bytes):
        events += parser.feed(*region)
    return events + parser.finish(), stats


def lines_bytes(lines: list[str], newline: str = "\n") -> bytes:
    return (newline.join(lines) + newline).encode()
