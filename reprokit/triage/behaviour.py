"""What the server did, beside what it said: readiness from behaviour, and other autotuners' failures.

A log may show a server that is up without its banner (the excerpt starts later, or the framework
prints none): it answers requests with 2xx, or runs batches, or logs the stats only a running engine
logs. ``Readiness`` keeps, for each way of showing it, the first line that did (the moment the server
is known up) and the last (the rule table's "last occurrence").

Other autotuners fail too, and go on: Inductor ignores a Triton choice that needs more shared memory
than the GPU has, TensorRT's builder skips a tactic that needs more memory than its pool.
``OtherAutotuneFailures`` counts them by autotuner and limit, with the tile where the line names it
(``BLOCK_M=64, BLOCK_N=128, BLOCK_K=128``), in bounded memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reprokit.triage.formats import PATTERNS_BY_KIND
from reprokit.triage.parser import Event

# readiness lines: sglang's banner, vLLM's API server, Triton's endpoint and its model table (a model READY: the
# table is printed once loading ends, its endpoints start right after), Ray Serve, TGI's router reaching its shards
READY_BANNER_KINDS = frozenset({"ready", "vllm_server_starting", "triton_server_started", "triton_model_ready",
                                "ray_serve_app_ready", "tgi_router_connected"})
READINESS_ORDER = ("banner", "request_served", "traffic", "routes")  # how strongly a line shows the server is up
MAX_ROWS = 64
MAX_VALUES = 16
_BLOCK = re.compile(r"BLOCK_(M|N|K)=([0-9]+)")


@dataclass
class Sighting:
    first: str  # file:line
    first_text: str
    last: str
    last_text: str
    count: int = 1


def _readiness_of(event: Event) -> str | None:
    """How this event shows the server up, or None."""
    if event.kind in READY_BANNER_KINDS or (event.kind == "uvicorn_startup_complete" and event.fmt != "sglang"):
        return "banner"  # vLLM has no 'ready to roll': its API server is up when uvicorn finishes starting
    how = PATTERNS_BY_KIND[event.kind].readiness
    if how == "request_served" and not (status := event.fields.get("status") or "").startswith("2"):
        # a 503 is a server still starting (sglang's /health before its warmup); another answer, 4xx or 5xx, came
        # from a handler of a server that is up, the request failed in it (sglang #10001: a KV transfer failed, 500)
        return "traffic" if status and status != "503" else None
    return how or None


class Readiness:
    def __init__(self) -> None:
        self.by: dict[str, Sighting] = {}

    def add(self, event: Event) -> bool:
        how = _readiness_of(event)
        if how is None:
            return False
        self.sighted(how, f"{event.file}:{event.line_no}", event.text.split("\n", 1)[0][:300])
        return True

    def sighted(self, how: str, where: str, text: str) -> None:
        seen = self.by.get(how)
        if seen is None:
            self.by[how] = Sighting(where, text, where, text)
        else:
            seen.last, seen.last_text, seen.count = where, text, seen.count + 1

    def best(self) -> tuple[str, Sighting] | None:
        """The strongest way the log shows the server up, and where."""
        for how in READINESS_ORDER:
            if how in self.by:
                return how, self.by[how]
        return None


@dataclass
class OtherAutotuneRow:
    autotuner: str  # 'inductor', 'tensorrt'
    limit_bytes: int | None
    count: int = 0
    first: str = ""
    last: str = ""
    required_bytes: list[int] = field(default_factory=list)
    tactics: list[str] = field(default_factory=list)
    tiles: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"autotuner": self.autotuner, "count": self.count, "limit_bytes": self.limit_bytes,
                "required_bytes": self.required_bytes, "tactics": self.tactics, "tiles": self.tiles,
                "first_location": self.first, "last_location": self.last}


def _add_capped(values: list, value) -> None:
    if value is not None and value not in values and len(values) < MAX_VALUES:
        values.append(value)


class OtherAutotuneFailures:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int | None], OtherAutotuneRow] = {}

    def add(self, event: Event) -> bool:
        autotuner = PATTERNS_BY_KIND[event.kind].autotuner
        if not autotuner:
            return False
        fields = event.fields
        limit = int(fields["limit_bytes"]) if fields.get("limit_bytes") else None
        key = (autotuner, limit)
        row = self.rows.get(key)
        if row is None:
            if len(self.rows) >= MAX_ROWS:
                return True
            row = self.rows[key] = OtherAutotuneRow(autotuner, limit, first=f"{event.file}:{event.line_no}")
        row.count += 1
        row.last = f"{event.file}:{event.line_no}"
        if fields.get("required_bytes"):
            _add_capped(row.required_bytes, int(fields["required_bytes"]))
        if fields.get("requested"):
            _add_capped(row.required_bytes, int(fields["requested"]))
        _add_capped(row.tactics, fields.get("tactic"))
        blocks = dict(_BLOCK.findall(event.text))
        if len(blocks) == 3:
            _add_capped(row.tiles, f"{blocks['M']}x{blocks['N']}x{blocks['K']}")
        return True

    @property
    def total(self) -> int:
        return sum(row.count for row in self.rows.values())

    def to_json(self) -> list[dict[str, Any]]:
        return [row.to_json() for row in self.rows.values()]
