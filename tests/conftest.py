"""Shared fixtures: the repository root and helpers to run the real CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# A suite started in the background of a non-interactive shell (`pytest ... &`) inherits SIGINT ignored, and every
# process it starts would too: the tests that send Ctrl-C to a run would see it ignored. Python's own handler is not
# inherited across exec, so the children start with the default, as under a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
