"""The one writer of a run's record: it creates the record, applies what the phases say happened
(``records/events.py``) to the manifest, and writes ``manifest.json`` and ``verdict.json`` atomically.

Nothing else in the package sets a manifest field or writes either file (``tests/unit/guards/test_hosts_seam.py``),
so the order of the writes, which is what a kill at any point leaves (``docs/reliability.md``), is read here:
the record is created before the first step; a step's ``in_flight`` is written before its launch and again with its
handle once launched; each step's end is written before the next step begins; the verdict file is written before
the manifest that summarises it; the final status and the files' hashes are written last.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from reprokit import __version__
from reprokit.errors import ConfigError
from reprokit.records.atomic import RecordUnwritable, no_room, unwritable, write_bytes_atomic, write_json_atomic
from reprokit.records.digests import DIGESTS
from reprokit.records.events import (
    Cancelled,
    Collected,
    Ended,
    Fingerprinted,
    HostLeft,
    HostPruned,
    InFlight,
    Judged,
    KeptOnHost,
    RunEvent,
    StepEnded,
)
from reprokit.records.models import Manifest, RunStatus, StepEntry
from reprokit.records.provenance import source_provenance
from reprokit.records.run_dir import KIT_COPY_DIR, MANIFEST, MANIFEST_SCHEMA_VERSION, VERDICT, RunRecord, utc_now


class Recorder:
    """A run's record, written only through ``record(event, ...)``: each call is one atomic write of the manifest."""

    def __init__(self, record: RunRecord):
        self._record = record

    @classmethod
    def create(cls, runs_dir: Path | str, run_id: str, **fields: Any) -> Recorder:
        """A new record, ``running`` and owned by this process; ``fields`` are the manifest's JSON fields (kit, pins,
        host, ...), validated as read back. Nothing half-written: no record is left without its manifest."""
        runs_dir = Path(runs_dir)
        if "/" in run_id or run_id.startswith(".") or not run_id:
            raise ConfigError(f"run id {run_id!r} would leave {runs_dir}; refused")
        run_dir = runs_dir / run_id
        data: dict[str, Any] = {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "run_id": run_id,
            "status": RunStatus.RUNNING,
            "started": utc_now(),
            "ended": None,
            "owner": {"pid": os.getpid(), "hostname": socket.gethostname()},
            "reprokit": {"version": __version__},
            "source": source_provenance((fields.get("kit") or {}).get("path")),  # git commit, CI run URL
            **fields,
            "steps": [],
            "artifacts": {},
        }
        manifest = Manifest.from_json(data, f"{run_dir / MANIFEST} (being created)")
        try:
            run_dir.mkdir(parents=True, exist_ok=False)
        except OSError as exc:  # a runs directory read-only or full from the start: one line, not a traceback
            refused = unwritable(exc) or no_room(exc, run_dir)
            if refused:
                raise refused from None
            raise
        recorder = cls(RunRecord(runs_dir, run_id, manifest))
        try:
            recorder._save()
        except BaseException:
            with contextlib.suppress(OSError):
                shutil.rmtree(run_dir)
            raise
        return recorder

    @classmethod
    def reopen(cls, run_dir: Path | str) -> Recorder:
        """An existing record, for ``invoke collect``, ``cancel`` and ``--prune`` (under the record's lock)."""
        return cls(RunRecord.open_existing(run_dir))

    @property
    def dir(self) -> Path:
        return self._record.dir

    @property
    def run_id(self) -> str:
        return self._record.run_id

    @property
    def manifest(self) -> Manifest:
        """The manifest as last recorded, for reading (the reports draw from it); change it through ``record``."""
        return self._record.manifest

    def step_dir(self, name: str) -> Path:
        return self._record.step_dir(name)

    def keep_kit(self, file_name: str, kit_bytes: bytes) -> None:
        """The kit file as this run read it, kept in the record (``kit/NAME.yml``): ``collect`` judges with this copy."""
        write_bytes_atomic(self._record.dir / KIT_COPY_DIR / Path(file_name).name, kit_bytes)

    def record(self, *events: RunEvent) -> None:
        """Apply ``events`` in order and write the manifest once (``verdict.json`` first, when judged).

        A ``KeptOnHost`` this machine cannot write any more leaves the manifest as last written (``running``, the
        step's handle in ``in_flight``): ``invoke collect`` reads that as a killed run once the directory is
        writable again. An ``Ended`` comes last: the files' hashes are taken as the manifest is written.
        """
        ended = self._checked(events)
        manifest = self._record.manifest
        for event in events:
            if isinstance(event, Judged):
                write_json_atomic(self.dir / VERDICT, event.verdict.to_json())
            _apply(manifest, event)
        if ended is not None:
            manifest.ended = utc_now()
            manifest.artifacts = self._record.hash_artifacts()
        if any(isinstance(e, KeptOnHost) for e in events):
            with contextlib.suppress(RecordUnwritable):
                self._save()
        else:
            self._save()
        if ended is not None:
            DIGESTS.forget_under(self.dir)

    def _checked(self, events: tuple[RunEvent, ...]) -> Ended | None:
        """The run's end among ``events``, once they are known to be events with nothing after an end: a refused call
        changes nothing, in memory or on disk."""
        for i, event in enumerate(events):
            if not isinstance(event, RunEvent):
                raise TypeError(f"not a run event: {event!r}")
            if isinstance(event, Ended) and not RunStatus(event.status).final:
                raise ValueError(f"a run ends in a final status, not '{event.status}'")
            if isinstance(event, Ended) and i < len(events) - 1:
                raise ValueError(f"{self.dir}: {type(events[i + 1]).__name__} recorded after the run ended ({event.status})")
        last = events[-1] if events else None
        return last if isinstance(last, Ended) else None

    def _save(self) -> None:
        write_json_atomic(self.dir / MANIFEST, self._record.manifest.to_json(), hashed=False)  # the manifest is no artifact


def _apply(manifest: Manifest, event: RunEvent) -> None:
    """The manifest's fields that ``event`` sets."""
    match event:
        case Fingerprinted(fingerprint, pin_drift, notes):
            manifest.fingerprint, manifest.pin_drift, manifest.in_flight = fingerprint, pin_drift, None
            if notes:
                manifest.preflight_notes = list(notes)
        case InFlight(at):
            manifest.in_flight = at
        case StepEnded(entry):
            _set_step(manifest, entry)
            manifest.in_flight = None
        case Collected(steps, fingerprint, status, detail):
            manifest.steps = list(steps)
            manifest.detached = manifest.in_flight = None
            manifest.fingerprint, manifest.status, manifest.status_detail = fingerprint, RunStatus(status), detail
        case Judged(verdict):
            manifest.verdict = verdict.summarised()
        case Ended(status, detail):
            manifest.status = RunStatus(status)
            if detail is not None:
                manifest.status_detail = detail
        case KeptOnHost(status, detail, at):
            manifest.status, manifest.status_detail = RunStatus(status), detail
            manifest.in_flight, manifest.detached = None, at
        case HostLeft(note):
            manifest.host_left = note
        case HostPruned(note):
            manifest.host_pruned = note
        case Cancelled(detail):
            manifest.status, manifest.status_detail = RunStatus.KILLED, detail


def _set_step(manifest: Manifest, entry: StepEntry) -> None:
    """A step's entry in its place (a step recorded again replaces its entry), else after the others."""
    for i, existing in enumerate(manifest.steps):
        if existing.name == entry.name:
            manifest.steps[i] = entry
            return
    manifest.steps.append(entry)
