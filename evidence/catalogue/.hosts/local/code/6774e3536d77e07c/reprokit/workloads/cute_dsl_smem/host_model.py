"""What the host side of a CuTe-DSL kernel needs of CuTe to size its shared memory, modelled on tuples.

Host code builds layouts to pass to the compiler, but to count bytes it only asks their shapes: ``cute.size``,
``cute.slice_``, ``cute.cosize``, ``cute.filter_zeros``, ``cute.append``, ``cute.tile_to_shape``. Those are
modelled exactly on shapes (a swizzle or a stride changes where bytes go, not how many a staged buffer holds).
Everything else the code touches on the way (tiled MMAs, barriers, copy atoms) is ``Opaque``: it absorbs
attribute access and calls, so the arithmetic around it runs. Element types are their widths in bits.

The scale-factor layouts of SM120 block-scaled MMAs (``sm120_make_smem_layout_sfa``/``_sfb``) are modelled as one
scale byte per ``sf_vec_size`` elements of A or B per stage, which is what ``cute.filter_zeros`` leaves of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from reprokit.workloads.facts.arch import SMEM_OPTIN_BYTES_BY_ARCH


class Opaque:
    """A CuTe object whose value does not change a byte count: every use of it gives another one."""

    def __getattr__(self, name: str) -> Opaque:
        if name.startswith("__"):
            raise AttributeError(name)
        return Opaque()

    def __call__(self, *args: Any, **kwargs: Any) -> Opaque:
        return Opaque()

    def __getitem__(self, key: Any) -> Opaque:
        return Opaque()

    def __bool__(self) -> bool:
        return True

    def __iter__(self):  # unpacking an opaque result: `a, b = helper()`
        return iter((Opaque(), Opaque(), Opaque()))


@dataclass(frozen=True)
class Numeric:
    """An element type: ``cutlass.Float4E2M1FN`` is 4 bits wide."""

    name: str
    width: int

    def __call__(self, value: Any = 0) -> Any:  # Int32(1) in host code is the number
        return value


NUMERICS = {name: Numeric(name, width) for name, width in (
    ("Float4E2M1FN", 4), ("Float8E4M3FN", 8), ("Float8E5M2", 8), ("Float8E8M0FNU", 8), ("BFloat16", 16),
    ("Float16", 16), ("Float32", 32), ("Int8", 8), ("Int16", 16), ("Int32", 32), ("Int64", 64), ("Uint8", 8),
    ("Uint32", 32), ("Uint64", 64), ("Boolean", 8))}
DTYPE_NAMES = {"float4_e2m1fn": "Float4E2M1FN", "float8_e4m3fn": "Float8E4M3FN", "float8_e5m2": "Float8E5M2",
               "float8_e8m0fnu": "Float8E8M0FNU", "bfloat16": "BFloat16", "float16": "Float16",
               "float32": "Float32", "int32": "Int32"}


@dataclass(frozen=True)
class Layout:
    """A layout reduced to its shape; ``outer``/``inner`` of a composed (swizzled) layout are the same shape."""

    shape: tuple

    @property
    def outer(self) -> Layout:
        return self

    @property
    def inner(self) -> Opaque:
        return Opaque()


def _flat(shape: Any) -> list[int]:
    if isinstance(shape, Layout):
        shape = shape.shape
    if isinstance(shape, (tuple, list)):
        return [n for part in shape for n in _flat(part)]
    if isinstance(shape, int):
        return [shape]
    raise TypeError(f"not a shape: {shape!r}")


def size(shape: Any) -> int:
    return math.prod(_flat(shape))


def slice_(shape: Any, coord: tuple) -> tuple:
    """The modes of ``shape`` where ``coord`` is None (``slice_((M, N, K), (None, 0, None))`` is ``(M, K)``)."""
    shape = shape.shape if isinstance(shape, Layout) else shape
    return tuple(mode for mode, c in zip(shape, coord) if c is None)


def append(shape: Any, mode: Any) -> tuple:
    shape = shape.shape if isinstance(shape, Layout) else shape
    return (*tuple(shape), mode)


def tile_to_shape(atom: Any, shape: Any, *args: Any, **kwargs: Any) -> Layout:
    return Layout(tuple(shape))


def make_layout(shape: Any, *args: Any, **kwargs: Any) -> Layout:
    return Layout(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))


@dataclass(frozen=True)
class Field:
    """A member of a ``@cute.struct``: its bytes and the alignment of its start."""

    bytes: int
    align: int


class _MemRange:
    def __getitem__(self, key: tuple) -> Field:
        dtype, count = key
        if not isinstance(dtype, Numeric) or not isinstance(count, int):
            raise TypeError(f"MemRange[{dtype!r}, {count!r}]: the element type or the count is not known here")
        return Field(bytes=count * dtype.width // 8, align=max(dtype.width // 8, 1))


class _Align:
    def __getitem__(self, key: tuple) -> Field:
        field, align = key
        return Field(bytes=field.bytes, align=int(align))


class _Struct(Opaque):
    MemRange = _MemRange()
    Align = _Align()


class Cute(Opaque):
    """``cutlass.cute`` as the host code's byte counting uses it."""

    size = staticmethod(size)
    cosize = staticmethod(size)
    slice_ = staticmethod(slice_)
    append = staticmethod(append)
    tile_to_shape = staticmethod(tile_to_shape)
    make_layout = staticmethod(make_layout)
    filter_zeros = staticmethod(lambda layout: layout)
    struct = _Struct()

    @staticmethod
    def size_in_bytes(dtype: Numeric, layout: Any) -> int:
        return size(layout) * dtype.width // 8


class Cutlass(Opaque):
    cute = Cute()

    def __getattr__(self, name: str) -> Any:
        return NUMERICS[name] if name in NUMERICS else super().__getattr__(name)


class Utils(Opaque):
    """``cutlass.utils``: the capacity is the arch's opt-in limit (CUTLASS's ``smXX_smem_capacity_bytes``)."""

    @staticmethod
    def get_smem_capacity_in_bytes(arch: str) -> int:
        name = arch.replace("_", "").rstrip("af")
        if name not in SMEM_OPTIN_BYTES_BY_ARCH:
            raise ValueError(f"get_smem_capacity_in_bytes({arch!r}): no capacity known for {name}")
        return SMEM_OPTIN_BYTES_BY_ARCH[name]


def smem_layout_sf(tile_mode: int):
    """``sm120_make_smem_layout_sfa`` (mode 0: M) / ``_sfb`` (mode 1: N): one scale per sf_vec_size K elements."""
    def make(tiled_mma: Any, tile_shape_mnk: tuple, sf_vec_size: int, stages: int) -> Layout:
        return Layout((tile_shape_mnk[tile_mode], tile_shape_mnk[2] // sf_vec_size, stages))
    return make


MODELLED = {"sm120_make_smem_layout_sfa": smem_layout_sf(0), "sm120_make_smem_layout_sfb": smem_layout_sf(1)}


def namespace() -> dict[str, Any]:
    """The module globals the extracted host code runs in (names it uses that are not here become Opaque)."""
    cutlass = Cutlass()
    return {"cute": cutlass.cute, "cutlass": cutlass, "utils": Utils(), "Int32": NUMERICS["Int32"],
            "Float32": NUMERICS["Float32"], **NUMERICS, **MODELLED}
