"""Progress of long steps, drawn from the workloads' ``progress: TASK k/n`` lines.

A workload knows how many units it has (compile units, sweep problems) and says ``progress: static-smem
compile 12/33: ...`` (``reprokit.workloads.contract.count_progress``); the control plane turns those lines
into a rich progress bar with an ETA on a terminal, and into a short line at every tenth of the way (or
every ``min_interval_s``) in a log or a CI job, where a redrawn bar would be noise. Not under ``--quiet``
(nothing while it works); under ``--verbose`` the lines behind a bar are printed too (``reprokit.output.verbosity``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from reprokit.output.hosttext import shown
from reprokit.workloads.contract import COUNT_PROGRESS_RE

LOG_STEPS = 10  # in a log: one line per tenth of the way
MAX_COUNT_DIGITS = 12  # the host writes these numbers: past a trillion units, a line is a line, not a count
MAX_TASK_CHARS = 80  # a task's name as shown beside its bar
MAX_TASKS = 8  # bars at once: a host that names 20 000 tasks gets 8 bars, and the rest as plain lines


@dataclass
class _Task:
    total: int
    started_s: float
    first_done: int
    done: int = 0
    printed_step: int = -1
    printed_s: float = 0.0
    bar: TaskID | None = None


def eta_s(task: _Task, now_s: float) -> float | None:
    """Seconds left at the pace since the first line (units already done then, e.g. cached, do not count)."""
    progressed = task.done - task.first_done
    if progressed <= 0:
        return None
    return (now_s - task.started_s) / progressed * (task.total - task.done)


class CountProgress:
    def __init__(self, console: Console, prefix: str = "", min_interval_s: float = 15.0,
                 clock: Callable[[], float] = time.monotonic):
        self.console = console
        self.prefix = prefix
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.tasks: dict[str, _Task] = {}
        self.bars: Progress | None = None
        self.lock = threading.Lock()
        self.live = console.is_terminal and not prefix  # hosts fanned out share one terminal: lines, not bars

    def feed(self, line: str) -> bool:
        """Take a ``progress: TASK k/n`` line (True), or leave any other line to the caller (False)."""
        match = COUNT_PROGRESS_RE.match(line.strip())
        if not match or max(len(match["done"]), len(match["total"])) > MAX_COUNT_DIGITS:
            return False
        name, done, total = shown(match["task"][:MAX_TASK_CHARS]), int(match["done"]), int(match["total"])  # the host's
        with self.lock:
            now = self.clock()
            task = self.tasks.get(name)
            if task is None and len(self.tasks) >= MAX_TASKS:
                return False
            if task is None or task.total != total or done < task.done:
                task = self.tasks[name] = _Task(total=total, started_s=now, first_done=done)
            task.done = done
            if self.live:
                self._draw(name, task)
            else:
                self._log(name, task, now)
        return True

    def _draw(self, name: str, task: _Task) -> None:
        if self.bars is None:
            self.bars = Progress(TextColumn(f"{self.prefix}      {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                                 transient=False)
            self.bars.start()
        if task.bar is None:
            task.bar = self.bars.add_task(escape(name), total=task.total, completed=task.done)  # a name is not markup
        self.bars.update(task.bar, completed=task.done)

    def _log(self, name: str, task: _Task, now: float) -> None:
        step = task.done * LOG_STEPS // max(task.total, 1)
        finished = task.done >= task.total
        if step == task.printed_step and not finished and now - task.printed_s < self.min_interval_s:
            return
        if finished and task.printed_step == LOG_STEPS:
            return
        task.printed_step, task.printed_s = step, now
        left = eta_s(task, now)
        tail = (f" in {now - task.started_s:.0f} s" if finished
                else f", ETA {left:.0f} s" if left is not None else "")
        self.console.print(f"{self.prefix}      {name} {task.done}/{task.total} ({task.done / max(task.total, 1):.0%}){tail}",
                           markup=False, highlight=False)

    def stop(self) -> None:
        """End the bars (a step finished); the next step's units start afresh."""
        with self.lock:
            if self.bars is not None:
                self.bars.stop()
                self.bars = None
            self.tasks.clear()
