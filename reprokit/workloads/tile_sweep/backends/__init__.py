"""The sweep's backends, each a plug-in module with the same two functions.

``unavailable(ctx) -> str | None``: why the backend cannot run here (the
result records it as ``skipped`` with that reason), or None.
``run(ctx) -> dict``: its section of the result: ``rows`` (one per measured
or attempted case, schema in ``reprokit.workloads.tile_sweep.result``) plus what
else it found. A backend never raises for a failing case; it records it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

BACKEND_MODULES = {
    "triton": "reprokit.workloads.tile_sweep.backends.triton_backend",
    "flashinfer": "reprokit.workloads.tile_sweep.backends.flashinfer_backend",
    "boundary": "reprokit.workloads.tile_sweep.backends.boundary",
}
# Run order: the raw boundary first (cheap, and it proves the limit the others are judged by).
RUN_ORDER = ("boundary", "flashinfer", "triton")


def load(name: str) -> ModuleType:
    return importlib.import_module(BACKEND_MODULES[name])
