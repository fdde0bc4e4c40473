"""The one retry policy (reprokit/hosts/retry.py), on a fake clock: attempts, the backoff and its cap, the
deadline, a non-transient error raised at once, and the policies the loops use."""

from __future__ import annotations

import paramiko
import pytest

from reprokit.errors import HostError
from reprokit.hosts.host_executor import CLEAN_UP_RETRY
from reprokit.hosts.retry import Retry
from reprokit.hosts.ssh import connect_policy
from reprokit.hosts.transport import CommandUnanswered, link_dropped, reconnect_policy


class FakeClock:
    """Time that moves only when slept: the waits are recorded, none is waited."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


class Flaky:
    """An attempt that fails with ``errors`` in turn, then returns the attempt's number."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[int] = []

    def __call__(self, n: int) -> int:
        self.calls.append(n)
        if self.errors:
            raise self.errors.pop(0)
        return n


def test_succeeds_on_the_third_attempt_after_doubling_waits():
    clock, attempt, told = FakeClock(), Flaky(ConnectionError("a"), ConnectionError("b")), []
    policy = Retry(attempts=5, transient=(ConnectionError,), first_delay_s=1.0)
    assert policy.run(attempt, lambda exc, delay_s: told.append((str(exc), delay_s)), clock) == 3
    assert attempt.calls == [1, 2, 3]
    assert clock.slept == [1.0, 2.0]
    assert told == [("a", 1.0), ("b", 2.0)]


def test_the_last_attempts_error_is_raised_and_no_wait_follows_it():
    clock, attempt = FakeClock(), Flaky(*(ConnectionError(str(i)) for i in range(4)))
    with pytest.raises(ConnectionError, match="^2$"):
        Retry(attempts=3, transient=(ConnectionError,), first_delay_s=1.0).run(attempt, clock=clock)
    assert attempt.calls == [1, 2, 3]
    assert clock.slept == [1.0, 2.0]


def test_the_wait_doubles_up_to_its_cap():
    clock, attempt = FakeClock(), Flaky(*(EOFError() for _ in range(6)))
    assert Retry(attempts=7, transient=(EOFError,), first_delay_s=1.0, max_delay_s=8.0).run(attempt, clock=clock) == 7
    assert clock.slept == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_a_non_transient_error_is_raised_at_once():
    clock, attempt, told = FakeClock(), Flaky(PermissionError("no")), []
    with pytest.raises(PermissionError):
        Retry(attempts=5, transient=lambda exc: isinstance(exc, ConnectionError), first_delay_s=1.0).run(
            attempt, lambda exc, delay_s: told.append(exc), clock)
    assert attempt.calls == [1]
    assert clock.slept == [] and told == []


def test_no_attempt_starts_past_the_deadline():
    clock, attempt = FakeClock(), Flaky(*(TimeoutError(str(i)) for i in range(9)))
    policy = Retry(attempts=10, transient=(TimeoutError,), first_delay_s=1.0, deadline_s=10.0)
    with pytest.raises(TimeoutError, match="^3$"):  # waits 1+2+4 = 7 s; the next (8 s) would end at 15 s
        policy.run(attempt, clock=clock)
    assert attempt.calls == [1, 2, 3, 4]
    assert clock.slept == [1.0, 2.0, 4.0]


def test_an_error_of_the_hook_ends_the_loop_with_it():
    def give_up(exc: BaseException, _: float) -> None:
        raise HostError("the link stays down")

    clock, attempt = FakeClock(), Flaky(ConnectionError("drop"))
    with pytest.raises(HostError, match="stays down"):
        Retry(attempts=3, transient=(ConnectionError,)).run(attempt, give_up, clock)
    assert attempt.calls == [1]


def test_attempts_up_to_the_deadline_alone():
    clock, attempt = FakeClock(), Flaky(*(OSError(str(i)) for i in range(99)))
    with pytest.raises(OSError, match="^29$"):  # every 2 s for 60 s: the 30th attempt starts at 58 s, the last
        Retry(attempts=None, transient=(OSError,), first_delay_s=2.0, max_delay_s=2.0, deadline_s=60.0).run(
            attempt, clock=clock)
    assert len(attempt.calls) == 30 and clock.t == 58.0


def test_a_policy_has_a_bound():
    with pytest.raises(ValueError, match="at least one attempt"):
        Retry(attempts=0, transient=(OSError,))
    with pytest.raises(ValueError, match="needs a bound"):
        Retry(attempts=None, transient=(OSError,))


def test_connect_retries_a_dropped_link_never_a_refused_key_or_login():
    policy = connect_policy()
    assert (policy.attempts, [policy.delay_s(n) for n in (1, 2)]) == (3, [1.0, 2.0])
    assert policy.is_transient(TimeoutError()) and policy.is_transient(ConnectionResetError())
    assert policy.is_transient(paramiko.SSHException("Error reading SSH protocol banner"))
    key = paramiko.ECDSAKey.generate()
    assert not policy.is_transient(paramiko.BadHostKeyException("h", key, key))
    assert not policy.is_transient(paramiko.AuthenticationException("denied"))


def test_a_dropped_command_is_run_again_an_unanswered_one_never():
    assert link_dropped(EOFError()) and link_dropped(TimeoutError("the link went silent"))
    assert not link_dropped(CommandUnanswered("`setsid` got no answer within the I/O timeout"))
    assert isinstance(CommandUnanswered("x"), TimeoutError)  # what callers catch


def test_reconnect_backs_off_to_eight_seconds_and_clean_up_tries_twice():
    policy = reconnect_policy(5)
    assert [policy.delay_s(n) for n in range(1, 5)] == [1.0, 2.0, 4.0, 8.0]
    assert policy.is_transient(HostError("cannot connect")) and not policy.is_transient(ValueError())
    assert CLEAN_UP_RETRY.attempts == 2 and CLEAN_UP_RETRY.is_transient(EOFError())
