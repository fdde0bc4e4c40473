"""How a run ends when it is not judged: the host keeps a step (detached, incomplete), it was interrupted, it failed.

Ctrl-C or SIGTERM ends the running workload and leaves the manifest ``interrupted``; a connection lost for good
leaves it ``detached`` for ``invoke collect``; a record this machine cannot write any more ends ``incomplete``
while the host keeps the step. Whatever the end, the host is released last (``release``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from reprokit.hosts.launch import Detached, Handle
from reprokit.phases.outcome import RunOutcome
from reprokit.phases.prepare import PreparedRun
from reprokit.phases.reporter import RunReporter
from reprokit.records.atomic import RecordUnwritable
from reprokit.records.models import RunStatus, StepAt, Verdict, Word
from reprokit.records.run_dir import RunRecord, utc_now

STOPPED = "stopped by Ctrl-C or SIGTERM"


def _sigterm_as_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the run as Ctrl-C does (only the main thread may set a handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def host_kept(run: PreparedRun, exc: Detached, reporter: RunReporter) -> RunOutcome:
    """The host keeps the step's files: ``invoke collect`` brings them back."""
    run.host_unreachable = exc.status == RunStatus.DETACHED  # an unreachable host cannot be cleaned up; an incomplete pull can
    mark_unpulled(run.record, exc.status, str(exc), exc.step, exc.handle)
    reporter.host_kept(exc.status, str(exc), run.record.run_id)
    return RunOutcome(run.record.dir, Verdict(exc.status.word, str(exc)), "host_kept")


def interrupted(run: PreparedRun, reporter: RunReporter) -> RunOutcome:
    """Ctrl-C or SIGTERM: the workload was ended; a step whose files are still on the host is left for collect."""
    record = run.record
    pending = run.executor.pending()
    if pending:
        step, handle = next(iter(pending.items()))
        detail = f"{STOPPED}; step '{step}' was ended, its files stay on the host"
        mark_unpulled(record, RunStatus.INCOMPLETE, detail, step, handle)
        reporter.interrupted_on_host(detail, record.run_id)
    else:
        detail = f"{STOPPED}; the running workload was ended"
        record.finish(RunStatus.INTERRUPTED, status_detail=detail)
        reporter.interrupted(record.dir)
    return RunOutcome(record.dir, Verdict(Word.INTERRUPTED, detail), "interrupted")  # the verdict line says why


def unwritable(run: PreparedRun, exc: RecordUnwritable, reporter: RunReporter) -> RunOutcome:
    """This machine cannot write the record: with a step still on the host, the run ends ``incomplete`` in one line."""
    pending = run.executor.pending()
    if not pending:
        raise exc
    mark_unpulled(run.record, RunStatus.INCOMPLETE, str(exc), *next(iter(pending.items())))
    reporter.unwritable(str(exc), run.executor.host.name, run.record.dir.name)
    return RunOutcome(run.record.dir, Verdict(Word.INCOMPLETE, str(exc)), "host_kept")


def failed(run: PreparedRun, exc: BaseException) -> None:
    """Any other error: the record says why (``failed``), or ``incomplete`` while a step is still on the host."""
    pending = run.executor.pending()
    if pending:
        step, handle = next(iter(pending.items()))
        mark_unpulled(run.record, RunStatus.INCOMPLETE, f"{type(exc).__name__}: {exc}", step, handle)
    else:
        run.record.finish(RunStatus.FAILED, status_detail=f"{type(exc).__name__}: {exc}")


def release(run: PreparedRun) -> None:
    """Give the host back (unless it is unreachable) and the record's lock; a survivor of the run is recorded."""
    try:
        if not run.host_unreachable and (left := run.executor.finish(keep_remote=run.options.keep_remote)):
            run.record.update(host_left=left)  # a process of the run survived its kill: the host's lock stays
    finally:
        run.release_record()


def mark_unpulled(record: RunRecord, status: RunStatus, detail: str, step: str, handle: Handle) -> None:
    """A record whose step's files are still on the host (``detached`` or ``incomplete``), for ``invoke collect``.

    Where this machine cannot write the record any more, it stays as last written (``running``, the step's handle in
    ``in_flight``): ``invoke collect`` reads that as a killed run once the directory is writable again.
    """
    with contextlib.suppress(RecordUnwritable):
        record.update(status=status, status_detail=detail, in_flight=None,
                      detached=StepAt(step, utc_now(), handle.remote_dir, handle.to_json()))
