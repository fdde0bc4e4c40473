"""What a failed tile configuration died of: a table of named patterns.

Each pattern has a class (what the sweep and the cross-check reason about)
and a real example line, tested in ``tests/unit/sweep``. First match wins, so
specific patterns come before general ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.workloads.facts import upstream_errors
from reprokit.workloads.facts.tiles import tile_name

# Classes, in words people search for.
ERROR_INTERNAL_INIT = "error_internal_init"  # CUTLASS initialize() -> cudaFuncSetAttribute refused the smem
CUTLASS_STATUS = "cutlass_status"  # another CUTLASS status in the launcher's checks
UNSUPPORTED_TILE = "unsupported_tile_shape"  # FlashInfer/TRT-LLM dispatch has no such tile for the arch
OUT_OF_RESOURCES = "out_of_resources"  # Triton refuses to load a kernel that needs more than the device has
CUDA_ERROR = "cuda_error"  # the driver or runtime returned an error
OUT_OF_MEMORY = "out_of_memory"
COMPILE_ERROR = "compile_error"
OTHER = "other"

@dataclass(frozen=True)
class ErrorPattern:
    name: str
    error_class: str
    regex: re.Pattern
    fields: tuple[str | None, ...]  # one name per capture group
    example: str


def _p(name: str, error_class: str, regex: str, example: str, fields: tuple[str | None, ...] = ()) -> ErrorPattern:
    return ErrorPattern(name, error_class, re.compile(regex), fields, example)


def _shared(name: str, error_class: str, message: upstream_errors.ErrorMessage, example: str = "") -> ErrorPattern:
    """A message the triage reads too: its regex, fields and example are the facts module's."""
    return ErrorPattern(name, error_class, re.compile(message.regex), message.fields, example or message.example)


PATTERNS = (
    _p("cutlass-init-error-internal", ERROR_INTERNAL_INIT,  # the SM120 smem failure: the init message, one status
       upstream_errors.MOE_GEMM_INIT_FAILED.regex.replace(upstream_errors.CUTLASS_STATUS_PATTERN, "(Error Internal)"),
       upstream_errors.MOE_GEMM_INIT_FAILED.example, upstream_errors.MOE_GEMM_INIT_FAILED.fields),
    _shared("cutlass-init-status", CUTLASS_STATUS, upstream_errors.MOE_GEMM_INIT_FAILED,
            "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Not"
            " Supported"),
    _shared("cutlass-can-implement", CUTLASS_STATUS, upstream_errors.MOE_GEMM_WILL_FAIL),
    _shared("cutlass-run-status", CUTLASS_STATUS, upstream_errors.MOE_GEMM_RUN_FAILED),
    _shared("cutlass-workspace", CUTLASS_STATUS, upstream_errors.MOE_GEMM_WORKSPACE),
    _shared("unsupported-tile-shape", UNSUPPORTED_TILE, upstream_errors.MOE_UNSUPPORTED_TILE_CONFIG),
    _shared("unsupported-tile-cluster", UNSUPPORTED_TILE, upstream_errors.MOE_UNSUPPORTED_TILE_CLUSTER),
    _shared("unsupported-cluster-shape", UNSUPPORTED_TILE, upstream_errors.MOE_UNSUPPORTED_CLUSTER_CONFIG),
    _shared("gemm-config-undefined", UNSUPPORTED_TILE, upstream_errors.MOE_GEMM_CONFIG_UNDEFINED),
    # Triton's own text, with or without the exception's qualified name in front
    _p("triton-out-of-resources", OUT_OF_RESOURCES,
       r"out of resource: ([a-z ]+), Required: ([0-9]+), Hardware limit: ([0-9]+)", upstream_errors.TRITON_OUT_OF_RESOURCES.example,
       upstream_errors.TRITON_OUT_OF_RESOURCES.fields),
    _p("cuda-out-of-memory", OUT_OF_MEMORY,
       r"CUDA out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation",
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 139.81 GiB"),
    _p("cuda-error", CUDA_ERROR,
       r"CUDA error: ([^\n]+)|(CUDA_ERROR_[A-Z_]+)|(cudaError[A-Za-z]+)",
       "torch.AcceleratorError: CUDA error: an illegal memory access was encountered", ("what", "name", "rt")),
    _p("triton-compilation", COMPILE_ERROR,
       r"CompilationError|PTXASError|ptxas fatal|ptxas error",
       "triton.compiler.errors.CompilationError: at 31:14:"),
)


def classify(text: str) -> dict:
    """``{"class", "pattern", "fields", "sticky"}`` for an exception text (with its type name in front)."""
    for pattern in PATTERNS:
        match = pattern.regex.search(text)
        if match:
            return {
                "class": pattern.error_class,
                "pattern": pattern.name,
                "fields": {name: value for name, value in zip(pattern.fields, match.groups())
                           if name is not None and value is not None},
                "sticky": pattern.error_class == CUDA_ERROR and any(s in text for s in upstream_errors.STICKY_CUDA_ERRORS),
            }
    return {"class": OTHER, "pattern": None, "fields": {}, "sticky": False}


def describe_exception(exc: BaseException, limit: int = 2000) -> dict:
    """The exception's type, its text (cut to ``limit`` characters) and its classification."""
    text = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    result = {"type": type(exc).__qualname__, "text": text[:limit]}
    result.update(classify(text))
    return result


_TILE_CONFIG = re.compile(upstream_errors.MOE_UNSUPPORTED_TILE_CONFIG.regex)
_DISPATCH_FRAME = re.compile(upstream_errors.MOE_DISPATCH_FRAME.regex)


def tile_from_error(text: str, element_bits: int) -> str | None:
    """The tile (MxNxK, elements) a FlashInfer/TRT-LLM error names: from the backtrace's template frame, or from
    the dispatch code, whose K counts bytes of the activation type (``element_bits`` wide; facts.tiles)."""
    if match := _DISPATCH_FRAME.search(text):
        frame = upstream_errors.fields_of(upstream_errors.MOE_DISPATCH_FRAME, match.groups())
        return f"{frame['tile_m']}x{frame['tile_n']}x{frame['tile_k']}"
    if match := _TILE_CONFIG.search(text):
        return tile_name(int(match.group(1)), element_bits)
    return None
