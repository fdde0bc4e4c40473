"""One run of a kit on a host, told as its phases: prepare, preflight, each step planned, launched, collected and
checked, then judged and reported, all into a run record.

inventory + kit -> plan -> executor -> workload -> run record -> judge -> report. Each phase is a function of the
module it belongs to (``reprokit/phases/``, planning's staging in ``plan/staging.py``); what the run says on the
console goes through one ``RunReporter``. How a run ends other than judged is ``phases/ending.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.config.kit import Kit
from reprokit.hosts.factory import ConnectOptions
from reprokit.hosts.launch import Detached
from reprokit.output.say import Say, silent
from reprokit.phases.conclude import conclude
from reprokit.phases.ending import failed, host_kept, interrupted, release, sigterm_as_interrupt, unwritable
from reprokit.phases.outcome import RunOutcome
from reprokit.phases.preflight import preflight
from reprokit.phases.prepare import PreparedRun, prepare
from reprokit.phases.reporter import RunReporter
from reprokit.phases.steps import launch_control, launch_on_host, plan, recorded
from reprokit.records.atomic import RecordUnwritable
from reprokit.records.models import StepEntry

__all__ = ["RunOutcome", "run_kit"]


def run_kit(
    kit: Kit,
    kit_path: Path,
    host: Host,
    runs_dir: Path,
    kits_dir: Path,
    say: Say = silent,
    stream: Say | None = None,
    inventory: Inventory | None = None,
    options: ConnectOptions | None = None,
    selection: dict[str, Any] | None = None,
) -> RunOutcome:
    """Run ``kit`` on ``host`` into a new record under ``runs_dir``; ``selection``: --only/--skip/--set, recorded."""
    reporter = RunReporter(say, stream)
    run = prepare(kit, kit_path, host, runs_dir, inventory, options, selection, reporter)
    with sigterm_as_interrupt():
        try:
            return steps_then_verdict(kit, run, kits_dir, reporter)
        except Detached as exc:  # the host keeps the step's files: `invoke collect` brings them back
            return host_kept(run, exc, reporter)
        except KeyboardInterrupt:
            return interrupted(run, reporter)
        except RecordUnwritable as exc:  # this machine refused the write: the host keeps the step, collect finishes it
            return unwritable(run, exc, reporter)
        except BaseException as exc:
            failed(run, exc)
            raise
        finally:
            release(run)


def steps_then_verdict(kit: Kit, run: PreparedRun, kits_dir: Path, reporter: RunReporter) -> RunOutcome:
    """Preflight, then each step planned, launched and collected, checked and recorded; then judged and reported."""
    fingerprint = preflight(kit, run, reporter)
    steps: dict[str, StepEntry] = {}
    for number, step in enumerate(kit.steps, start=2):
        planned, entry = plan(step, kit, kits_dir, fingerprint, steps, run)
        if planned.skip_reason:
            reporter.step_skipped(number, entry)
        elif planned.kind.where == "control":
            reporter.step_started(number, step.name, step.uses)
            entry = launch_control(planned, entry, steps, run.record)
            reporter.control_step_ended(entry)
        else:
            reporter.step_started(number, step.name, step.uses)
            entry, duration_s = launch_on_host(step, planned, entry, run, reporter)
            reporter.host_step_ended(entry, duration_s)
        recorded(run.record, steps, entry)
    return conclude(kit, run.record, steps, fingerprint)
