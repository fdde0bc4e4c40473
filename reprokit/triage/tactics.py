"""The tactic-to-tile table of a FlashInfer version, written by the static analysis.

FlashInfer's autotuner names a failed tactic only by its number; what the number means
(which tile, fusion and swap) depends on the FlashInfer version and the arch. The static
shared-memory analysis writes that mapping to ``reprokit/data/tactics/flashinfer-<version>.json``::

    {"flashinfer": "0.6.3", "arch": "sm120",
     "tactics": [{"op": "trtllm::fused_moe::gemm1", "tactic": 0, "tile": "128x128x128",
                  "tile_enum": "CtaShape128x128x64B", "fusion": "NONE", "swap_ab": false}, ...]}

``tile`` is in elements (MxNxK), ``fusion`` is ``NONE`` or ``FINALIZE``.

``choose_table`` finds the table of exactly the release the log ran: shipped with reprokit
(every flashinfer-python release from 0.6.0 to the newest listed in ``releases.json``), or in the
cache, or computed on demand from the release's own wheel by the static analysis and cached.
When there is none it says why (unknown version, no table, another arch); a tactic number the
table does not have is out of range. A table of another release is never used instead.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from reprokit.errors import ConfigError
from reprokit.workloads.static_smem.targets import ARCHES

TACTICS_DIR = Path(__file__).resolve().parents[1] / "data" / "tactics"
RELEASES_FILE = TACTICS_DIR / "releases.json"  # the flashinfer-python releases the tables cover, from PyPI
FIRST_RELEASE = Version("0.6.0")
ANALYSED_ARCHES = tuple(ARCHES)  # every arch the static analysis can compute (the fit table shows fit_table.TABLE_ARCHES)
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
        return self.resolve(tactic, op)[0]

    def resolve(self, tactic: int, op: str | None) -> tuple[Tactic | None, str | None, str]:
        """(entry, None, '') or (None, reason, detail): 'out_of_range' or 'ambiguous'."""
        matches = [t for t in self.tactics if t.tactic == tactic]
        if len(matches) > 1 and op is not None:
            matches = [t for t in matches if t.op == op]
        if len(matches) == 1:
            return matches[0], None, ""
        if not matches:
            numbers = sorted({t.tactic for t in self.tactics if op is None or t.op == op})
            span = f"{numbers[0]}-{numbers[-1]}" if numbers else "none"
            return None, "out_of_range", (f"tactic {tactic} is not in FlashInfer {self.flashinfer}'s {self.arch} table "
                                          f"({len(self.tactics)} tactics, numbered {span}{' for ' + op if op else ''})")
        return None, "ambiguous", f"tactic {tactic} names one tactic of each GEMM in FlashInfer {self.flashinfer}; the log does not say which op"


@dataclass(frozen=True)
class TableChoice:
    """The table for a log's FlashInfer release and arch, or why there is none."""

    table: TacticTable | None
    source: str | None  # 'file' (given), 'shipped', 'cache', 'computed'
    reason: str | None  # 'unknown_version', 'no_table', 'no_table_for_arch', 'conflicting_versions'
    detail: str  # the reason in words, or where the table came from


def default_tactics_path(flashinfer_version: str, arch: str = "sm120") -> Path:
    suffix = "" if arch == "sm120" else f"-{arch}"
    return TACTICS_DIR / f"flashinfer-{flashinfer_version}{suffix}.json"


def cache_dir() -> Path:
    """Where computed tables are kept: ``$REPROKIT_CACHE/tactics`` (default ``~/.cache/reprokit``)."""
    return Path(os.environ.get("REPROKIT_CACHE") or Path.home() / ".cache" / "reprokit") / "tactics"


def known_releases() -> list[str]:
    """The flashinfer-python releases from 0.6.0 on, newest last, as listed on the package index."""
    data = json.loads(RELEASES_FILE.read_text(encoding="utf-8"))
    return list(data["releases"])


def choose_table(versions: list[str], arch: str | None, *, tactics_file: Path | None = None,
                 compute: bool = False) -> TableChoice:
    """The tactic table of the one FlashInfer release in ``versions`` for ``arch`` (default sm120)."""
    if tactics_file is not None:
        table = load_tactic_table(tactics_file)
        return TableChoice(table, "file", None, f"tactics from {tactics_file}")
    if not versions:
        return TableChoice(None, None, "unknown_version",
                           "the FlashInfer version is unknown: the log names none; pass --flashinfer")
    if len(set(versions)) > 1:
        return TableChoice(None, None, "conflicting_versions",
                           f"the log names FlashInfer {' and '.join(dict.fromkeys(versions))}; pass --flashinfer")
    version, arch = versions[0], arch or "sm120"
    try:
        release = Version(version)
    except InvalidVersion:
        return TableChoice(None, None, "no_table", f"{version!r} is not a FlashInfer version")
    if release < FIRST_RELEASE:
        return TableChoice(None, None, "no_table",
                           f"FlashInfer {version} predates {FIRST_RELEASE}, the first release with a tactic table")
    if arch not in ANALYSED_ARCHES:
        return TableChoice(None, None, "no_table_for_arch",
                           f"no tactic table for {arch}: the static analysis covers {', '.join(ANALYSED_ARCHES)}")
    shipped = default_tactics_path(version, arch)
    if shipped.is_file():
        return TableChoice(load_tactic_table(shipped), "shipped", None, f"tactics from {shipped}")
    cached = cache_dir() / shipped.name
    if cached.is_file():
        return TableChoice(load_tactic_table(cached), "cache", None, f"tactics from {cached}")
    if not compute:
        listed = "" if version in known_releases() else " (not a release listed in releases.json)"
        return TableChoice(None, None, "no_table",
                           f"no {arch} tactic table for FlashInfer {version}{listed}; computing it was not asked for")
    return compute_table(version, arch, cached)


def compute_table(version: str, arch: str, target: Path) -> TableChoice:
    """Compute the table from the release's own wheel (``static_smem.tactics``: pip + nvcc) into ``target``."""
    from reprokit.workloads.contract import WorkloadError
    from reprokit.workloads.static_smem.tactics import tactics_document

    try:
        with tempfile.TemporaryDirectory(prefix="reprokit-tactics-") as work:
            document = tactics_document({"flashinfer": version, "arch": arch}, Path(work))
    except WorkloadError as exc:
        return TableChoice(None, None, "no_table", f"no {arch} table for FlashInfer {version}: computing it failed ({exc})")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".json.partial")
    partial.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    partial.replace(target)
    return TableChoice(load_tactic_table(target), "computed", None, f"tactics computed from the {version} wheel into {target}")


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
