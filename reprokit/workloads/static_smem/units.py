"""Tile names and their units: the trap this module exists to get right once.

TensorRT-LLM's tile enums (``CutlassTileConfigSM120::CtaShape128x128x64B``)
count K in BYTES; CUTLASS tiles count K in ELEMENTS. The MoE dispatcher
(``moe_gemm_template_dispatch_tma_ws.h``, macro ``SHAPE_CASE``) converts with
``K_elements = K_bytes * 8 / sizeof_bits<T>``, T being the activation type:
for NVFP4 (4 bits) ``CtaShape128x128x64B`` is the CUTLASS tile <128,128,128>.

The enum's integer value is ``m * 1000000 + n * 1000 + k`` (``shape_tuple_to_enum``
in ``cutlass_extensions/gemm_configs.h``), which is also what dispatch errors
print (``Unsupported tile shape config 128128256``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENUM_NAME = re.compile(r"^CtaShape(\d+)x(\d+)x(\d+)B$")

# Bits per element of the activation types the launcher handles.
ELEMENT_BITS = {"fp4": 4, "fp8": 8, "bf16": 16, "f16": 16, "f32": 32}


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
    match = ENUM_NAME.match(name)
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


def parse_tile(tile: str) -> tuple[int, int, int]:
    """``"128x256x128"`` -> (128, 256, 128)."""
    parts = tile.split("x")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not an MxNxK tile: {tile!r}")
    m, n, k = (int(p) for p in parts)
    return m, n, k
