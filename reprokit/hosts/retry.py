"""One retry policy for every loop that tries again: opening a connection, reconnecting, a dropped command, a
pull-back resumed, a launch, the clean-up after a drop, a registry's token dance.

A ``Retry`` says how many attempts (the first included; None: as many as the deadline leaves room for), how long to wait before each next one (doubling from
``first_delay_s`` up to ``max_delay_s``), when to stop starting new ones (``deadline_s`` after the first), and
which errors are worth another attempt: ``transient``, a tuple of error classes or a function of the error, so
that the decision is the error's class wherever the class says it (a refused host key is never retried, a
dropped link is). Anything else is raised at once, as is the last attempt's error: the caller turns it into
its own message, since only it knows what was being done.

The clock is a parameter (``Clock``: ``now`` and ``sleep``), so the policy's arithmetic is tested without
waiting (``tests/unit/hosts/test_retry.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """This machine's monotonic clock: a wall-clock change never shortens or stretches a wait."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


MONOTONIC = MonotonicClock()

Transient = tuple[type[BaseException], ...] | Callable[[BaseException], bool]


@dataclass(frozen=True)
class Retry:
    """How a loop tries again; ``run`` is the loop."""

    attempts: int | None  # None: bounded by the deadline alone
    transient: Transient
    first_delay_s: float = 0.0
    max_delay_s: float = float("inf")
    deadline_s: float = float("inf")  # after the first attempt's start: a wait that would end past it ends the loop

    def __post_init__(self) -> None:
        if self.attempts is None and self.deadline_s == float("inf"):
            raise ValueError("a retry policy needs a bound: a number of attempts or a deadline")
        if self.attempts is not None and self.attempts < 1:
            raise ValueError(f"a retry policy needs at least one attempt, got {self.attempts}")

    def is_transient(self, exc: BaseException) -> bool:
        if isinstance(self.transient, tuple):
            return isinstance(exc, self.transient)
        return self.transient(exc)

    def delay_s(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (1-based): doubling from the first delay, never above the cap."""
        return min(self.first_delay_s * 2.0 ** min(attempt - 1, 64), self.max_delay_s)  # 2**64: past any cap

    def run(self, attempt: Callable[[int], T], before_retry: Callable[[BaseException, float], None] | None = None,
            clock: Clock = MONOTONIC) -> T:
        """``attempt(n)`` (n from 1) until it returns; its error is raised when it is not transient, when it was the
        last attempt, or when the deadline leaves no time for another.

        ``before_retry(error, delay_s)`` runs between a failed attempt and the wait before the next (a message,
        a reconnect); an error it raises ends the loop with that error.
        """
        deadline = clock.now() + self.deadline_s
        n = 1
        while True:
            try:
                return attempt(n)
            except Exception as exc:  # noqa: BLE001 - classified by the policy, raised unchanged otherwise
                if (self.attempts is not None and n >= self.attempts) or not self.is_transient(exc):
                    raise
                delay_s = self.delay_s(n)
                if clock.now() + delay_s >= deadline:
                    raise
                if before_retry is not None:
                    before_retry(exc, delay_s)
                if delay_s > 0:
                    clock.sleep(delay_s)
                n += 1


__all__ = ["MONOTONIC", "Clock", "MonotonicClock", "Retry", "Transient"]
