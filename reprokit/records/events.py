"""What happened to a run, as the phases say it: small typed values the recorder (``records/recorder.py``) applies.

A phase never sets a manifest field: it says what happened (a step is in flight, a step ended with this entry, the
run was judged) and the recorder turns that into the manifest's fields and writes it. Each event names the fields it
sets, so the record's shape at every point of a run is read here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import RunStatus, StepAt, StepEntry, Verdict


@dataclass(frozen=True)
class Fingerprinted:
    """The fingerprint came back: ``fingerprint``, ``pin_drift``, ``preflight_notes`` (when any); nothing in flight."""

    fingerprint: Fingerprint
    pin_drift: dict[str, dict[str, str | None]]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class InFlight:
    """A step is being launched (``at`` without a handle: written before the launch) or runs (with its handle):
    ``in_flight``, what ``invoke collect`` finds a killed run's step by."""

    at: StepAt


@dataclass(frozen=True)
class StepEnded:
    """A step's entry as it ended (ran, planned out, or a control step's), in the kit's order; nothing in flight."""

    entry: StepEntry


@dataclass(frozen=True)
class Collected:
    """``invoke collect`` brought the pending steps back: the record's steps (the kit's order), its fingerprint, and
    nothing in flight or detached any more; the status as collect took it (``killed`` with ``--force``) until the
    record ends, and ``status_detail`` saying what the run was before."""

    steps: list[StepEntry]
    fingerprint: Fingerprint | None
    status: RunStatus
    detail: str


@dataclass(frozen=True)
class Judged:
    """The judge's verdict: ``verdict.json`` in full, and its summary in the manifest."""

    verdict: Verdict


@dataclass(frozen=True)
class Ended:
    """The run ended here in a final status (complete, interrupted, failed): its end time and every file's hash."""

    status: RunStatus
    detail: str | None = None


@dataclass(frozen=True)
class KeptOnHost:
    """A step's files stay on the host (``detached``, ``incomplete``) for ``invoke collect``: ``detached`` says
    which step and where, nothing is in flight."""

    status: RunStatus
    detail: str
    at: StepAt


@dataclass(frozen=True)
class HostLeft:
    """A process of the run survived its kill on the host: the host's lock stays (``host_left``)."""

    note: str


@dataclass(frozen=True)
class HostPruned:
    """``invoke collect --prune`` removed the host's copy of a finished run (``host_pruned``)."""

    note: str


@dataclass(frozen=True)
class Cancelled:
    """``invoke cancel`` ended the run's step on the host: ``killed``, for ``invoke collect``."""

    detail: str


RunEvent = Fingerprinted | InFlight | StepEnded | Collected | Judged | Ended | KeptOnHost | HostLeft | HostPruned | Cancelled
