"""What every backend of one sweep shares: the device, the problems, the ceilings, the clock."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.workloads.tile_sweep.shapes import GemmProblem
from reprokit.workloads.tile_sweep.tiles import TileConfig


@dataclass
class SweepContext:
    problems: list[GemmProblem]
    configs: list[TileConfig]
    out_dir: Path
    deadline: float  # time.monotonic() after which no new case starts
    time_budget_s: float
    model_config: dict[str, Any] = field(default_factory=dict)
    torch: Any = None  # the torch module, when a CUDA device is usable
    device: dict[str, Any] = field(default_factory=dict)  # name, gpu_arch, capability, smem_optin_bytes, ...
    ceilings: dict[str, Any] = field(default_factory=dict)
    flush: Any = None  # a tensor of 2x L2 bytes, zeroed before each timed launch
    lost_context: str | None = None  # set after a sticky CUDA error: no GPU work may follow

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    @property
    def has_gpu(self) -> bool:
        return self.torch is not None and bool(self.device)
