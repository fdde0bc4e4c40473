"""A file staged into a step, as a value both sides of the executor read.

The planner resolves a step's inputs to these (``reprokit/plan/inputs.py``), the executor stages them on the host
(``reprokit/hosts/host_files.py``), and the manifest keeps each one's ``describe``, a ``StagedInput``. It lives here,
below both, so that the hosts import nothing of the planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pydantic
from pydantic import StrictInt, StrictStr

from reprokit.records.typed import Record


@pydantic.dataclasses.dataclass(frozen=True)
class StagedInput(Record):
    """A staged input as the step's manifest entry keeps it (``inputs``): the file, where it came from, its host path.
    ``size_bytes`` is written ``bytes``, as the manifest always has."""

    param: StrictStr
    origin: StrictStr
    sha256: StrictStr
    size_bytes: Annotated[StrictInt, pydantic.Field(alias="bytes")]
    host_path: StrictStr


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
