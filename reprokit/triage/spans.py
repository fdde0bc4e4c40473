"""How often something happened, when, on which ranks; and autotune failures grouped by tactic and tile."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from reprokit.triage.parser import Event

MAX_NAMES_PER_SET = 64


def _add_capped(names: set[str], name: str | None) -> None:
    if name is not None and (name in names or len(names) < MAX_NAMES_PER_SET):
        names.add(name)


@dataclass
class Span:
    """How often something happened, first and last time, and on which ranks."""

    count: int = 0
    first_at: str | None = None
    first_key: str | None = None
    last_at: str | None = None
    last_key: str | None = None
    first_location: str | None = None
    ranks: set[str] = field(default_factory=set)

    def add(self, event: Event) -> None:
        self.count += 1
        _add_capped(self.ranks, event.rank)
        if self.first_location is None:
            self.first_location = f"{event.file}:{event.line_no}"
        if event.at_key is None:
            return
        if self.first_key is None or event.at_key < self.first_key:
            self.first_key, self.first_at = event.at_key, event.at
            self.first_location = f"{event.file}:{event.line_no}"
        if self.last_key is None or event.at_key > self.last_key:
            self.last_key, self.last_at = event.at_key, event.at

    def merge(self, other: Span) -> None:
        if other.first_key is not None and (self.first_key is None or other.first_key < self.first_key):
            self.first_key, self.first_at, self.first_location = other.first_key, other.first_at, other.first_location
        if other.last_key is not None and (self.last_key is None or other.last_key > self.last_key):
            self.last_key, self.last_at = other.last_key, other.last_at
        self.first_location = self.first_location or other.first_location
        self.count += other.count
        for rank in other.ranks:
            _add_capped(self.ranks, rank)


@dataclass
class _FailureGroup:
    """Failures of one tactic as the log describes them, before the tactic table is applied."""

    span: Span = field(default_factory=Span)
    unattributed_by_file: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    instantiation_files: set[str] = field(default_factory=set)
    runners: set[str] = field(default_factory=set)


@dataclass
class FailureRow:
    """Autotune failures of one (op, tactic, tile, fusion, swap_ab), as reported."""

    op: str | None
    tactic: int | str
    tile: str | None
    tile_enum: str | None
    fusion: str | None
    swap_ab: bool | None
    tile_source: str | None  # 'exception_text' (a dispatch frame or message), 'tactics_file', or None
    span: Span
    unattributed: int  # failures whose line named no rank (FlashInfer's logger has none under sglang)
    errors: Counter[str]
    instantiation_files: set[str]
    runners: set[str]
    mapping: dict[str, str | None] = field(default_factory=dict)  # status, reason, detail, table
