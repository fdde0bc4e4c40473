"""The run's one voice on the console: every line ``run_kit`` says goes through a ``RunReporter``.

The phases hand it what happened (a step began, ended, was planned out; the host is not what the inventory says);
it words the line and says it through the front end's ``say``, and hands the workloads' own lines to ``stream``.
A reason shared by several steps (no GPU here) is said once (``SaidOnce``).
"""

from __future__ import annotations

from pathlib import Path

from reprokit.output.say import Say, silent
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import StepEntry
from reprokit.report.reasons import SaidOnce

SERVER_OUTCOMES = {"ready": "came up", "fatal": "died (fatal)", "exited": "exited before it was ready",
                   "timeout": "did not come up in time",
                   "ready_answering_wrong": "came up, and answered wrong"}  # a serve step's `outcome`, in words


class RunReporter:
    """What a run says while it works: its start, each step's progress and end, and the warnings of how it ended."""

    def __init__(self, say: Say = silent, stream: Say | None = None):
        self.say = say
        self._stream = stream  # the workloads' lines, as the front end shows them (None: not shown)
        self.total = 0
        self._once = SaidOnce(None)

    @property
    def stream(self) -> Say | None:
        """The workloads' lines; one that only repeats why there is no GPU (the fingerprint said it) is left out."""
        if self._stream is None:
            return None

        def shown_once(line: str) -> None:
            if not any(reason and reason in line for reason in self._once.said if self._once.said[reason] == "the fingerprint"):
                self._stream(line)
        return shown_once

    def started(self, run_id: str, kit: str, host: str, runtime: str, pins: dict[str, str], steps: int) -> None:
        self.total = steps + 1  # the fingerprint is step 1
        pinned = ", ".join(f"{k} {v}" for k, v in pins.items())
        self.say(f"run {run_id}: kit {kit} on host {host} ({runtime}); pins: {pinned}")

    def secret_missing(self, name: str) -> None:
        self.say(f"warning: secret {name} is not set in the environment; the run goes on without it")

    def fingerprinting(self) -> None:
        self.say(f"[1/{self.total}] fingerprint ...")

    def pin_drift(self, drift: dict[str, dict[str, str | None]]) -> None:
        for name, versions in drift.items():
            self.say(f"      note: {name} is pinned to {versions['pinned']} but"
                     f" {versions['installed'] or 'not installed'} on the host")

    def preflight_note(self, note: str) -> None:
        self.say(f"      warning: {note}")

    def fingerprinted(self, fingerprint: Fingerprint) -> None:
        """The GPUs the workloads see, or why none; a no-GPU reason is then said once for all the steps."""
        gpus = fingerprint.devices
        if gpus:
            names = sorted({f"{d.name} ({d.gpu_arch}, {d.multiprocessor_count} SMs)" for d in gpus})
            self.say(f"      {len(gpus)} GPU(s): {', '.join(names)}")
        else:
            self.say(f"      no GPU: {fingerprint.gpu_reason}")
        self._once = SaidOnce(None if gpus else fingerprint.gpu_reason)

    def step_skipped(self, number: int, entry: StepEntry) -> None:
        self.say(f"[{number}/{self.total}] {entry.name} ({entry.uses}) ... {self._once(entry.reason, entry.name)}")

    def step_started(self, number: int, name: str, uses: str) -> None:
        self.say(f"[{number}/{self.total}] {name} ({uses}) ...")

    def control_step_ended(self, entry: StepEntry) -> None:
        self.say(f"      {entry.status}" + (f": {self._once(entry.reason, entry.name)}" if entry.reason else "")
                 + (f": {entry.result['verdict']}" if entry.result and "verdict" in entry.result else ""))

    def host_step_ended(self, entry: StepEntry, duration_s: float) -> None:
        """The step's status (whether the workload kept its contract) and, for a server, what the server did: "ok"
        next to a server that died would read as if all went well."""
        detail = entry.reason or ""
        outcome = entry.result.get("outcome") if isinstance(entry.result, dict) else None
        said = f"      {entry.status} in {duration_s:.1f} s" + (f": {self._once(detail, entry.name)}" if detail else "")
        if isinstance(outcome, str):
            said = f"      step {entry.status} in {duration_s:.1f} s; the server {SERVER_OUTCOMES.get(outcome, outcome)}"
        self.say(said)

    def host_kept(self, status: str, detail: str, run_id: str) -> None:
        """The host keeps a step's files (detached, incomplete): said when quiet too."""
        self.say(f"warning: {status}: {detail}. Bring the run back later with `invoke collect {run_id}`")

    def interrupted_on_host(self, detail: str, run_id: str) -> None:
        self.say(f"warning: interrupted; {detail}: `invoke collect {run_id}` brings them back")

    def interrupted(self, record_dir: Path) -> None:
        self.say(f"warning: interrupted; partial record in {record_dir}")

    def unwritable(self, detail: str, host: str, run_id: str) -> None:
        self.say(f"warning: incomplete: {detail}; the files stay on host '{host}'. Bring the run back later with"
                 f" `invoke collect {run_id}`")
