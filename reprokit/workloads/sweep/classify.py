"""What a failed tile configuration died of: a table of named patterns.

Each pattern has a class (what the sweep and the cross-check reason about)
and a real example line, tested in ``tests/unit/sweep``. First match wins, so
specific patterns come before general ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Classes, in words people search for.
ERROR_INTERNAL_INIT = "error_internal_init"  # CUTLASS initialize() -> cudaFuncSetAttribute refused the smem
CUTLASS_STATUS = "cutlass_status"  # another CUTLASS status in the launcher's checks
UNSUPPORTED_TILE = "unsupported_tile_shape"  # FlashInfer/TRT-LLM dispatch has no such tile for the arch
OUT_OF_RESOURCES = "out_of_resources"  # Triton refuses to load a kernel that needs more than the device has
CUDA_ERROR = "cuda_error"  # the driver or runtime returned an error
OUT_OF_MEMORY = "out_of_memory"
COMPILE_ERROR = "compile_error"
OTHER = "other"

# Errors after which the CUDA context is unusable: nothing after them on the same process can be trusted.
STICKY_CUDA_ERRORS = (
    "illegal memory access", "illegal instruction", "misaligned address", "unspecified launch failure",
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorIllegalAddress", "cudaErrorLaunchFailure",
)


@dataclass(frozen=True)
class ErrorPattern:
    name: str
    error_class: str
    regex: re.Pattern
    example: str


def _p(name: str, error_class: str, regex: str, example: str) -> ErrorPattern:
    return ErrorPattern(name, error_class, re.compile(regex), example)


PATTERNS = (
    _p("cutlass-init-error-internal", ERROR_INTERNAL_INIT,
       r"Failed to initialize cutlass TMA WS grouped gemm\. Error: Error Internal",
       "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal"
       " (/workspace/flashinfer/csrc/nv_internal/tensorrt_llm/cutlass_instantiations/120/gemm_grouped/"
       "cutlass_kernel_file_gemm_grouped_sm120_M128_group0.generated.cu:60)"),
    _p("cutlass-init-status", CUTLASS_STATUS,
       r"Failed to initialize cutlass TMA WS grouped gemm\. Error: (?P<status>[A-Za-z ]+)",
       "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Not Supported"),
    _p("cutlass-can-implement", CUTLASS_STATUS,
       r"Grouped GEMM kernel will fail for params\. Error: (?P<status>[A-Za-z ]+)",
       "[TensorRT-LLM][ERROR] Assertion failed: Grouped GEMM kernel will fail for params. Error: Error Misaligned Operand"),
    _p("cutlass-run-status", CUTLASS_STATUS,
       r"Failed to run cutlass TMA WS grouped gemm\. Error: (?P<status>[A-Za-z ]+)",
       "[TensorRT-LLM][ERROR] Assertion failed: Failed to run cutlass TMA WS grouped gemm. Error: Error Internal"),
    _p("cutlass-workspace", CUTLASS_STATUS,
       r"Workspace is size (?P<have>\d+) but only (?P<allocated>\d+) were allocated",
       "[TensorRT-LLM][ERROR] Assertion failed: Workspace is size 4194304 but only 1048576 were allocated"),
    _p("unsupported-tile-shape", UNSUPPORTED_TILE,
       r"Unsupported tile shape config (?P<code>\d+) for MoE gemm",
       "[TensorRT-LLM][ERROR] Unsupported tile shape config 128256128 for MoE gemm."),
    _p("unsupported-tile-cluster", UNSUPPORTED_TILE,
       r"Unsupported tile \(.*\) and cluster \(.*\) shape combination for arch \d+",
       "[TensorRT-LLM][ERROR] Unsupported tile (128, 256, 128) and cluster (1, 1, 1) shape combination for arch 120"),
    _p("unsupported-cluster-shape", UNSUPPORTED_TILE,
       r"Unsupported cluster shape config",
       "[TensorRT-LLM][ERROR] Unsupported cluster shape config"),
    _p("gemm-config-undefined", UNSUPPORTED_TILE,
       r"GEMM config undefined",
       "[TensorRT-LLM][ERROR] Assertion failed: GEMM config undefined."),
    _p("triton-out-of-resources", OUT_OF_RESOURCES,
       r"out of resource: (?P<resource>[a-z ]+), Required: (?P<required>\d+), Hardware limit: (?P<limit>\d+)",
       "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144,"
       " Hardware limit: 232448. Reducing block sizes or `num_stages` may help."),
    _p("cuda-out-of-memory", OUT_OF_MEMORY,
       r"CUDA out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation",
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 139.81 GiB"),
    _p("cuda-error", CUDA_ERROR,
       r"CUDA error: (?P<what>[^\n]+)|(?P<name>CUDA_ERROR_[A-Z_]+)|(?P<rt>cudaError[A-Za-z]+)",
       "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"),
    _p("triton-compilation", COMPILE_ERROR,
       r"CompilationError|PTXASError|ptxas fatal|ptxas error",
       "triton.compiler.errors.CompilationError: at 31:14:"),
)


def classify(text: str) -> dict:
    """``{"class", "pattern", "fields", "sticky"}`` for an exception text (with its type name in front)."""
    for pattern in PATTERNS:
        match = pattern.regex.search(text)
        if match:
            fields = {key: value for key, value in match.groupdict().items() if value is not None}
            return {
                "class": pattern.error_class,
                "pattern": pattern.name,
                "fields": fields,
                "sticky": pattern.error_class == CUDA_ERROR and any(s in text for s in STICKY_CUDA_ERRORS),
            }
    return {"class": OTHER, "pattern": None, "fields": {}, "sticky": False}


def describe_exception(exc: BaseException, limit: int = 2000) -> dict:
    """The exception's type, its text (cut to ``limit`` characters) and its classification."""
    text = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    result = {"type": type(exc).__qualname__, "text": text[:limit]}
    result.update(classify(text))
    return result


_TILE_IN_BACKTRACE = re.compile(r"cute::tuple<cute::C<(\d+)>,\s*cute::C<(\d+)>,\s*cute::C<(\d+)>\s*>")
_ENUM_TILE = re.compile(r"CtaShape(\d+)x(\d+)x(\d+)B")
_PLAIN_TILE = re.compile(r"^(\d+)x(\d+)x(\d+)$")


def normalize_tile(value, k_elements_per_byte: int = 2) -> str | None:
    """A CUTLASS tile as ``"MxNxK"`` in elements, from the spellings that occur.

    Accepts ``[128, 128, 256]``, ``"128x128x256"``, the dispatch code ``128128256``
    (m*1e6 + n*1e3 + k), and FlashInfer's SM120 enum names, whose K counts BYTES
    (``CtaShape128x128x128B`` is ``128x128x256`` for 4-bit elements).
    """
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return "x".join(str(int(v)) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value // 1_000_000}x{(value // 1000) % 1000}x{value % 1000}"
    if not isinstance(value, str):
        return None
    text = value.strip()
    if match := _ENUM_TILE.search(text):
        m, n, k_bytes = (int(g) for g in match.groups())
        return f"{m}x{n}x{k_bytes * k_elements_per_byte}"
    if match := _PLAIN_TILE.match(text):
        return text
    if text.isdigit():
        return normalize_tile(int(text))
    return None


def tile_from_error(text: str) -> str | None:
    """The tile a FlashInfer/TRT-LLM error names, from the dispatch code or the backtrace's template frame."""
    match = re.search(r"Unsupported tile shape config (\d+)", text)
    if match:
        return normalize_tile(int(match.group(1)))
    match = _TILE_IN_BACKTRACE.search(text)
    if match:
        return "x".join(match.groups())
    return None
