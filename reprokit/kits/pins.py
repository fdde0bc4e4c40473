"""Check a kit's pins against the pinned wheels' own metadata.

sglang's wheel pins FlashInfer and torch exactly; a kit that pins sglang
0.5.9 next to another FlashInfer would reproduce a stack nobody runs. The
metadata comes from the package index (``pip install --dry-run --report``,
which reads PEP 658 metadata and downloads no wheel).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from reprokit.config.kit import Kit
from reprokit.errors import HostError

NOT_ON_PYPI = {"cuda"}  # the CUDA toolkit pin names an image base, not a wheel
PIP_TIMEOUT_S = 300


@dataclass(frozen=True)
class PinProblem:
    package: str
    required_by: str
    requirement: str
    pinned: str

    def __str__(self) -> str:
        return f"{self.required_by} requires {self.requirement}, but the kit pins {self.package} {self.pinned}"


def fetch_metadata(pins: dict[str, str]) -> dict[str, dict]:
    """Each pinned package's metadata (name -> metadata dict of pip's installation report)."""
    wanted = [f"{name}=={version}" for name, version in pins.items() if name not in NOT_ON_PYPI]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--no-deps", "--ignore-installed",
               "--disable-pip-version-check", "--report", str(report), *wanted]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise HostError(f"pip did not answer within {PIP_TIMEOUT_S} s; is the package index reachable?") from None
        if proc.returncode != 0:
            last = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()[-1:]
            raise HostError(f"cannot read the pinned wheels' metadata: {' '.join(last)}")
        data = json.loads(report.read_text())
    return {canonicalize_name(item["metadata"]["name"]): item["metadata"] for item in data["install"]}


def pin_problems(pins: dict[str, str], metadata: dict[str, dict]) -> list[PinProblem]:
    """Requirements of a pinned package on another pinned package that the kit's version does not satisfy."""
    pinned = {canonicalize_name(k): (k, v) for k, v in pins.items()}
    problems = []
    for owner, meta in sorted(metadata.items()):
        for text in meta.get("requires_dist") or []:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(req.name)
            if name in pinned and name != owner:
                pin_name, version = pinned[name]
                if not req.specifier.contains(version, prereleases=True):
                    problems.append(PinProblem(pin_name, f"{meta['name']} {meta['version']}", text, version))
    return problems


def check_kit(kit: Kit) -> tuple[list[PinProblem], dict[str, dict]]:
    metadata = fetch_metadata(kit.pins)
    return pin_problems(kit.pins, metadata), metadata

