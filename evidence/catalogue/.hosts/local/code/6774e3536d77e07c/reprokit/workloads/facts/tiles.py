"""Tile names and their units: the trap this module exists to get right once.

FlashInfer's vendored TensorRT-LLM tile enums (``CutlassTileConfigSM120::CtaShape128x128x64B``) count K in
BYTES; CUTLASS tiles count K in ELEMENTS. The MoE dispatcher converts with ``K_elements = K_bytes * 8 /
sizeof_bits<T>``, T the activation type, so for NVFP4 (4 bits) ``CtaShape128x128x64B`` is the CUTLASS tile
<128,128,128>. The enum's integer value is ``m * 1000000 + n * 1000 + k`` with that same K in bytes, and it is
what a dispatch error prints. In the pinned wheel (flashinfer-python 0.6.3, under ``flashinfer/data/csrc/
nv_internal/tensorrt_llm/``):

- ``cutlass_extensions/include/cutlass_extensions/gemm_configs.h:87``: ``return m * 1000000 + n * 1000 + k;``
  (``shape_tuple_to_enum``), and ``:172``: ``CtaShape128x128x256B = shape_tuple_to_enum(128, 128, 256),``;
- ``kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch_tma_ws.h:393-397``: ``constexpr int KtileBytes =
  (K * 8) / cutlass::sizeof_bits<...T...>::value; using KTileDim = Int<KtileBytes>;`` (the cute tile's K, in
  elements), and ``:413-414``: ``TLLM_THROW("Unsupported tile shape config %d for MoE gemm.", (int)gemm_config.
  tile_config_sm##SMVERSION);``.

So ``Unsupported tile shape config 128128256`` names ``CtaShape128x128x256B``: for NVFP4 activations the
CUTLASS tile 128x128x512 (the static analysis's reading), not 128x128x256 (what the sweep read before: it took
the printed K for elements). ``parse_tile`` asks for the activation's bits whenever a spelling counts K in bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENUM_NAME = re.compile(r"CtaShape(\d+)x(\d+)x(\d+)B")
_PLAIN_TILE = re.compile(r"^(\d+)x(\d+)x(\d+)$")

# Bits per element of the activation types the MoE launcher handles, by reprokit's short names and by the C++
# type names that backtraces print (the T of the dispatcher's K-bytes -> K-elements conversion).
ELEMENT_BITS = {
    "fp4": 4, "nvfp4": 4, "fp8": 8, "bf16": 16, "f16": 16, "f32": 32,
    "__nv_fp4_e2m1": 4, "cutlass::float_e2m1_t": 4,
    "__nv_fp8_e4m3": 8, "__nv_fp8_e5m2": 8, "cutlass::float_e4m3_t": 8,
    "__nv_bfloat16": 16, "half": 16, "__half": 16, "float": 32,
}
FP4_BITS = ELEMENT_BITS["fp4"]


@dataclass(frozen=True)
class TileEnum:
    """A tile as the enum names it: M and N in elements, K in bytes."""

    m: int
    n: int
    k_bytes: int

    @property
    def name(self) -> str:
        return f"CtaShape{self.m}x{self.n}x{self.k_bytes}B"

    @property
    def value(self) -> int:
        return self.m * 1_000_000 + self.n * 1_000 + self.k_bytes

    def k_elements(self, element_bits: int) -> int:
        """K in elements of ``element_bits`` each, as the dispatcher's SHAPE_CASE computes it."""
        if (self.k_bytes * 8) % element_bits:
            raise ValueError(f"{self.name}: {self.k_bytes} B is not a whole number of {element_bits}-bit elements")
        return self.k_bytes * 8 // element_bits

    def tile(self, element_bits: int) -> str:
        """The CUTLASS tile "MxNxK" in elements, the unit the rest of reprokit uses."""
        return tile_string(self.m, self.n, self.k_elements(element_bits))


def parse_enum_name(name: str) -> TileEnum:
    """``"CtaShape128x128x64B"`` -> TileEnum(128, 128, 64)."""
    match = ENUM_NAME.fullmatch(name)
    if not match:
        raise ValueError(f"not a CtaShape<M>x<N>x<K>B tile enum name: {name!r}")
    m, n, k = (int(g) for g in match.groups())
    return TileEnum(m, n, k)


def from_enum_value(value: int) -> TileEnum:
    """``128128064`` -> TileEnum(128, 128, 64); the inverse of ``shape_tuple_to_enum``."""
    if value < 1_000_000:
        raise ValueError(f"{value} is not a tile enum value (m*1000000 + n*1000 + k)")
    return TileEnum(value // 1_000_000, value // 1_000 % 1_000, value % 1_000)


def tile_string(m: int, n: int, k: int) -> str:
    return f"{m}x{n}x{k}"


def parse_tile(spelling: object, element_bits: int | None = None) -> tuple[int, int, int]:
    """(M, N, K) in elements from any spelling of a tile; the one reader of tile names.

    ``[128, 256, 128]`` and ``"128x256x128"`` are CUTLASS tiles, already in elements. An enum name
    (``"CtaShape128x128x64B"``, with or without its ``CutlassTileConfigSM120::``) and a dispatch code
    (``128128064`` or ``"128128064"``) count K in bytes: they need ``element_bits``, the activation's width.
    Raises ValueError for anything else, naming what it got.
    """
    if isinstance(spelling, (list, tuple)) and len(spelling) == 3 and all(isinstance(v, int) for v in spelling):
        m, n, k = spelling
        return int(m), int(n), int(k)
    enum: TileEnum | None = None
    if isinstance(spelling, int) and not isinstance(spelling, bool):
        enum = from_enum_value(spelling)
    elif isinstance(spelling, str):
        text = spelling.strip()
        if match := _PLAIN_TILE.match(text):
            m, n, k = (int(g) for g in match.groups())
            return m, n, k
        if text.isdigit():
            enum = from_enum_value(int(text))
        elif match := ENUM_NAME.search(text):
            enum = TileEnum(*(int(g) for g in match.groups()))
    if enum is None:
        raise ValueError(f"not a tile (MxNxK, CtaShape<M>x<N>x<K>B or m*1000000+n*1000+k): {spelling!r}")
    if element_bits is None:
        raise ValueError(f"{enum.name} counts K in bytes: the activation type's bits are needed to read it")
    return enum.m, enum.n, enum.k_elements(element_bits)


def tile_name(spelling: object, element_bits: int | None = None) -> str | None:
    """``parse_tile`` as ``"MxNxK"``, or None when the spelling is not a tile (for readers of loose records)."""
    try:
        return tile_string(*parse_tile(spelling, element_bits))
    except ValueError:
        return None
