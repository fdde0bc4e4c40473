"""Fixtures of the static shared-memory tests: pinned wheels, nvcc, recorded probe output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.static_smem.nvcc import Nvcc, find_nvcc

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def wheel_cache() -> Path:
    """The user's reprokit cache, so the pinned wheels are downloaded once per machine."""
    return wheels.default_cache_dir()


@pytest.fixture(scope="session")
def fetch_wheel(wheel_cache: Path):
    """fetch_wheel("0.6.3") -> the extracted wheel (downloads it on first use)."""
    def fetch(version: str) -> wheels.Wheel:
        return wheels.fetch(version, wheel_cache)
    return fetch


@pytest.fixture(scope="session")
def nvcc() -> Nvcc:
    try:
        return find_nvcc()
    except WorkloadError as exc:
        pytest.skip(f"no usable nvcc here: {exc}")


@pytest.fixture
def kernel_records() -> dict[str, dict]:
    """Real probe output (flashinfer 0.6.3, sm120, bf16), keyed by variant."""
    return json.loads((FIXTURES / "kernels-0.6.3-sm120.json").read_text())
