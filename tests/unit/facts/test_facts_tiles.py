"""The tile-name units trap: enum names count K in bytes, CUTLASS tiles count K in elements."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reprokit.workloads.facts.tiles import (
    TileEnum,
    from_enum_value,
    parse_enum_name,
    parse_tile,
    tile_name,
    tile_string,
)

FP4_BITS = 4


@pytest.mark.parametrize(("enum_name", "tile"), [
    ("CtaShape128x128x64B", "128x128x128"),
    ("CtaShape128x128x128B", "128x128x256"),
    ("CtaShape128x256x64B", "128x256x128"),
    ("CtaShape256x128x64B", "256x128x128"),
])
def test_fp4_doubles_k(enum_name: str, tile: str) -> None:
    assert parse_enum_name(enum_name).tile(FP4_BITS) == tile


def test_k_elements_depend_on_the_activation_width() -> None:
    enum = parse_enum_name("CtaShape128x128x128B")
    assert enum.k_elements(4) == 256  # NVFP4
    assert enum.k_elements(8) == 128  # FP8 (the W4A8 path keeps K)
    assert enum.k_elements(16) == 64  # BF16


def test_enum_value_is_what_dispatch_errors_print() -> None:
    # "Unsupported tile shape config 128128256 for MoE gemm." names CtaShape128x128x256B
    enum = from_enum_value(128128256)
    assert enum == TileEnum(128, 128, 256)
    assert enum.name == "CtaShape128x128x256B"
    assert enum.tile(FP4_BITS) == "128x128x512"
    assert parse_enum_name("CtaShape256x128x64B").value == 256128064


def test_bad_names_and_values_are_refused() -> None:
    with pytest.raises(ValueError, match="not a CtaShape"):
        parse_enum_name("CtaShape128x128x64")  # no B: not a byte count
    with pytest.raises(ValueError, match="not a tile enum value"):
        from_enum_value(1)
    with pytest.raises(ValueError, match="whole number"):
        TileEnum(128, 128, 3).k_elements(16)
    with pytest.raises(ValueError, match="not a tile"):
        parse_tile("128x128")


@given(st.integers(1, 999), st.integers(1, 999), st.integers(1, 999))
def test_enum_value_round_trip(m: int, n: int, k: int) -> None:
    enum = TileEnum(m, n, k)
    assert from_enum_value(enum.value) == enum
    assert parse_enum_name(enum.name) == enum
    assert parse_tile(tile_string(m, n, k)) == (m, n, k)


@pytest.mark.parametrize(("spelling", "bits", "tile"), [
    ([128, 128, 256], None, "128x128x256"),  # CUTLASS tiles are in elements already
    ("128x256x128", None, "128x256x128"),
    (128256128, 4, "128x256x256"),  # a dispatch code is an enum value: K in bytes
    ("128128256", 4, "128x128x512"),  # 'Unsupported tile shape config 128128256': CtaShape128x128x256B
    ("128128256", 8, "128x128x256"),  # the same enum for FP8 activations
    ("CtaShape128x128x64B", 4, "128x128x128"),
    ("CutlassTileConfigSM120::CtaShape256x128x64B", 4, "256x128x128"),
    ("CtaShape128x128x128B", 4, "128x128x256"),
])
def test_every_spelling_is_read_in_elements(spelling, bits, tile) -> None:
    assert tile_name(spelling, bits) == tile


def test_a_spelling_in_bytes_needs_the_activation_width() -> None:
    with pytest.raises(ValueError, match="CtaShape128x128x256B counts K in bytes"):
        parse_tile("128128256")
    assert tile_name("CtaShape128x128x64B") is None
    assert tile_name("what", 4) is None
    assert tile_name(None, 4) is None
