"""A file staged into a step, as a value both sides of the executor read.

The planner resolves a step's inputs to these (``reprokit/plan/inputs.py``), the executor stages them on the host
(``reprokit/hosts/host_files.py``), and the manifest keeps each one's ``describe``, a ``StagedInput``. It lives here,
below both, so that the hosts import nothing of the planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.records.fields import Fields


@dataclass(frozen=True)
class StagedInput:
    """A staged input as the step's manifest entry keeps it (``inputs``): the file, where it came from, its host path."""

    param: str
    origin: str
    sha256: str
    size_bytes: int
    host_path: str

    @classmethod
    def from_json(cls, fields: Fields) -> StagedInput:
        take = fields.take
        return cls(take("param", str, required=True), take("origin", str, required=True),
                   take("sha256", str, required=True), take("bytes", int, required=True),
                   take("host_path", str, required=True))

    def to_json(self) -> dict[str, Any]:
        """In the order the manifest has always written it; ``bytes`` is the size."""
        return {"param": self.param, "origin": self.origin, "sha256": self.sha256, "bytes": self.size_bytes,
                "host_path": self.host_path}


@dataclass(frozen=True)
class InputFile:
    """One file to stage for a step: where it is here, what it is, and whether the host may keep it."""

    param: str
    source: Path  # on the control machine
    sha256: str
    size_bytes: int
    origin: str  # e.g. "step static-smem: result.json" or "control cache: flashinfer_python-0.6.3-py3-none-any.whl"
    keep_on_host: bool  # control-machine artifacts stay in the host's cache (content-addressed) between runs

    def describe(self, host_path: str) -> StagedInput:
        """The manifest's record of this file, staged at ``host_path``."""
        return StagedInput(self.param, self.origin, self.sha256, self.size_bytes, host_path)
