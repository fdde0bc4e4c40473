"""Shared fixtures: the repository root and helpers to run the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


def run_invoke(*args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real `invoke` of this environment in the repository (tasks.py is found there)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
    )
