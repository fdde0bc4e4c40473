"""The pinned sglang wheel, from the cache or the package index once; without either the tests say so and skip."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.triton_smem.kernels import pinned_wheel

SGLANG = "0.5.9"
HAS_TRITON = importlib.util.find_spec("triton") is not None
NO_TRITON = ("triton is not installed in this environment (not in the dev lock: 170 MB); the cross-compiles ran with"
             " Triton 3.5.1 on PYTHONPATH, see evidence/triton-cross-compile/README.md")


@pytest.fixture(scope="session")
def sglang_wheel() -> Path:
    try:
        return pinned_wheel("sglang", SGLANG, None)
    except WorkloadError as exc:
        pytest.skip(f"sglang {SGLANG}'s wheel: {exc}")
