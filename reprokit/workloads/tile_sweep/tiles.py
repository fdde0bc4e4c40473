"""The Triton tile configurations the sweep tries, and the naive static size estimate.

The grid mixes decode tiles (BLOCK_M 16/32: one M tile per expert, memory
bound) and prefill tiles (BLOCK_M 64-256), and deliberately straddles the two
limits that matter: SM120's 101376 B and SM90/SM100's 232448 B per block.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

ELEMENT_BYTES = 2  # bf16 operands


@dataclass(frozen=True)
class TileConfig:
    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    num_warps: int
    group_m: int = 8

    @property
    def id(self) -> str:
        return f"m{self.block_m}n{self.block_n}k{self.block_k}s{self.num_stages}w{self.num_warps}"

    def static_estimate_bytes(self) -> int:
        """``(BLOCK_M + BLOCK_N) * BLOCK_K * num_stages * 2``: the estimate Triton's own matmul
        pruning used. The compiled size differs per architecture (the MMA path decides
        how many stages get a buffer), which is why the sweep compiles for each target."""
        return (self.block_m + self.block_n) * self.block_k * self.num_stages * ELEMENT_BYTES

    def as_dict(self) -> dict:
        return {"id": self.id, **asdict(self), "static_estimate_bytes": self.static_estimate_bytes()}


DEFAULT_GRID = (
    # decode: one M tile per expert, many CTAs streaming the weights; shared memory sets how many fit an SM
    TileConfig(16, 64, 64, 4, 4),
    TileConfig(16, 64, 128, 3, 4),
    TileConfig(16, 64, 128, 4, 4),
    TileConfig(16, 64, 256, 4, 4),
    TileConfig(16, 128, 128, 4, 4),
    TileConfig(16, 32, 256, 5, 4),
    TileConfig(16, 64, 128, 8, 4),
    TileConfig(16, 128, 256, 5, 4),
    TileConfig(32, 64, 128, 5, 4),
    # middle
    TileConfig(64, 64, 128, 4, 4),
    TileConfig(64, 128, 64, 4, 4),
    TileConfig(64, 256, 64, 4, 8),
    # prefill: tensor-core bound
    TileConfig(128, 128, 64, 3, 8),
    TileConfig(128, 128, 64, 4, 8),
    TileConfig(128, 256, 64, 3, 8),
    TileConfig(128, 256, 64, 4, 8),
    TileConfig(128, 128, 128, 4, 8),
    TileConfig(256, 128, 64, 3, 8),
)


def parse_tile_configs(raw: list) -> list[TileConfig]:
    """Tile configs from params: dicts with block_m/block_n/block_k/num_stages/num_warps[/group_m]."""
    configs = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError(f"a tile config must be a mapping, got {item!r}")
        try:
            configs.append(TileConfig(**{key: int(value) for key, value in item.items()}))
        except TypeError as exc:
            raise ValueError(f"bad tile config {item!r}: {exc}") from None
    return configs
