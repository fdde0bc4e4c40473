"""The tactic-to-tile table of a FlashInfer version, written by the static analysis.

FlashInfer's autotuner names a failed tactic only by its number; what the number means
(which tile, fusion and swap) depends on the FlashInfer version and the arch. The static
shared-memory analysis writes that mapping to ``reprokit/data/tactics/flashinfer-<version>.json``::

    {"flashinfer": "0.6.3", "arch": "sm120",
     "tactics": [{"op": "trtllm::fused_moe::gemm1", "tactic": 0, "tile": "128x128x128",
                  "tile_enum": "CtaShape128x128x64B", "fusion": "NONE", "swap_ab": false}, ...]}

``tile`` is in elements (MxNxK), ``fusion`` is ``NONE`` or ``FINALIZE``. The triage reads
the file when it exists and otherwise falls back to what the exception text says.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from reprokit.errors import ConfigError

TACTICS_DIR = Path(__file__).resolve().parents[1] / "data" / "tactics"
_TILE = re.compile(r"\d+x\d+x\d+")
_FUSIONS = ("NONE", "FINALIZE")


@dataclass(frozen=True)
class Tactic:
    op: str
    tactic: int
    tile: str
    tile_enum: str
    fusion: str
    swap_ab: bool


@dataclass(frozen=True)
class TacticTable:
    path: Path
    flashinfer: str
    arch: str
    tactics: tuple[Tactic, ...]

    def lookup(self, tactic: int, op: str | None) -> Tactic | None:
        """The entry for ``tactic``: unique by number when FlashInfer numbers tactics across
        both GEMMs (gemm2 after gemm1), else told apart by ``op`` when that is known."""
        matches = [t for t in self.tactics if t.tactic == tactic]
        if len(matches) > 1 and op is not None:
            matches = [t for t in matches if t.op == op]
        return matches[0] if len(matches) == 1 else None


def default_tactics_path(flashinfer_version: str) -> Path:
    return TACTICS_DIR / f"flashinfer-{flashinfer_version}.json"


_KIND_NAMES = {int: "an integer", str: "a string", bool: "true or false"}


def _field(path: Path, index: int, entry: dict, name: str, kind: type) -> object:
    value = entry.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{path}: tactics[{index}].{name} must be {_KIND_NAMES[kind]}, got {value!r}")
    return value


def load_tactic_table(path: Path) -> TacticTable:
    """Read and check a tactic table; a missing or malformed file is a ``ConfigError`` naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read tactic table ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("tactics"), list):
        raise ConfigError(f"{path}: expected an object with a 'tactics' list")
    tactics = []
    for index, entry in enumerate(data["tactics"]):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: tactics[{index}] must be an object")
        tile = str(_field(path, index, entry, "tile", str))
        if not _TILE.fullmatch(tile):
            raise ConfigError(f"{path}: tactics[{index}].tile must be 'MxNxK' in elements, got {tile!r}")
        fusion = str(_field(path, index, entry, "fusion", str))
        if fusion not in _FUSIONS:
            raise ConfigError(f"{path}: tactics[{index}].fusion must be one of {', '.join(_FUSIONS)}, got {fusion!r}")
        tactics.append(
            Tactic(
                op=str(_field(path, index, entry, "op", str)),
                tactic=int(_field(path, index, entry, "tactic", int)),  # type: ignore[call-overload]
                tile=tile,
                tile_enum=str(_field(path, index, entry, "tile_enum", str)),
                fusion=fusion,
                swap_ab=bool(_field(path, index, entry, "swap_ab", bool)),
            )
        )
    return TacticTable(path, str(data.get("flashinfer", "")), str(data.get("arch", "")), tuple(tactics))
