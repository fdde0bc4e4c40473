"""The run record's typed models: the manifest, a step's entry in it, an artifact's hash, the verdict (the
fingerprint's are in ``fingerprint.py``).

They are pydantic dataclasses (``typed.py``): built in code by position, validated when a record is read back with
``from_json(data, where)``: a field of the wrong type is a ConfigError of one line naming the file and the field
(``runs/x/manifest.json: steps[2].status: expected one of ok|..., got 7``). ``to_json`` writes the keys in the order
reprokit has always written them, so a record read and written again is the same bytes (an ``Omittable`` field that is
None is left out; the others are written as null).
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Annotated, Any

import pydantic
from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic.dataclasses import dataclass

from reprokit.records.fingerprint import Fingerprint
from reprokit.records.inputs import StagedInput
from reprokit.records.typed import KNOWN_ONLY, Omittable, Record, file_keys, in_file
from reprokit.workloads.facts.exits import StepStatus

__all__ = ["Artifact", "Judgement", "KitRef", "LeftOnHost", "Manifest", "Owner", "RunStatus", "StagedInput", "StepAt", "StepEntry", "StepStatus",
           "Verdict", "VerdictSummary", "Word"]


class Word(StrEnum):
    """A run's verdict word: the judge's (PASS, FAIL, INCONCLUSIVE), or, for a run not judged, how it ended."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"
    INTERRUPTED = "INTERRUPTED"
    DETACHED = "DETACHED"
    INCOMPLETE = "INCOMPLETE"
    KILLED = "KILLED"

    @classmethod
    def judged(cls) -> tuple[Word, ...]:
        """The judge's words: the only ones ``verdict.json`` and an expectation's judgement may hold."""
        return cls.PASS, cls.FAIL, cls.INCONCLUSIVE


class RunStatus(StrEnum):
    """A run's status in its manifest (``status``); written to JSON as its value (``"complete"``)."""

    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    DETACHED = "detached"  # the connection was lost for good: the host keeps the step's files (``invoke collect``)
    INCOMPLETE = "incomplete"  # a pull-back stopped (disk full, byte cap, Ctrl-C): the host keeps the rest
    KILLED = "killed"  # read back only: the manifest says running, its writer is gone

    @property
    def final(self) -> bool:
        """A status a run ends in on this machine (``RunRecord.finish``); the others wait for ``invoke collect``."""
        return self in (RunStatus.COMPLETE, RunStatus.FAILED, RunStatus.INTERRUPTED)

    @property
    def word(self) -> Word:
        """The verdict word of a run that was not judged: its status, in capitals."""
        return Word[self.name]


def _is_hex_digest(value: Any) -> bool:
    return not isinstance(value, str) or (len(value) == 64 and all(c in "0123456789abcdef" for c in value))


_JUDGED = in_file(lambda word: word in Word.judged(), f"one of {'|'.join(Word.judged())}")  # verdict.json's words


@dataclass
class Artifact(Record):
    """A file of the record: its sha256 and size, as verified by ``invoke check-record``."""

    sha256: Annotated[StrictStr, in_file(_is_hex_digest, "64 lowercase hex digits")]
    bytes: StrictInt


@dataclass
class Owner(Record):
    """The control process that writes the record: a ``running`` record whose owner is gone was killed."""

    pid: StrictInt
    hostname: StrictStr


@dataclass
class KitRef(Record):
    """The kit a run ran: its name, file, the file's sha256 and its description."""

    name: StrictStr
    path: Omittable[StrictStr] = None
    sha256: Omittable[StrictStr] = None
    description: Omittable[StrictStr] = None


@dataclass
class VerdictSummary(Record):
    """The verdict as the manifest carries it (``verdict.json`` has every expectation)."""

    verdict: Word
    summary: StrictStr


@dataclass(config=KNOWN_ONLY)
class Judgement(Record):
    """One expectation as the judge found it (an item of ``verdict.json``)."""

    WHAT = "an expectation's judgement"
    name: StrictStr
    step: StrictStr
    status: Annotated[Word, _JUDGED]  # PASS, FAIL or INCONCLUSIVE
    expected: StrictStr
    observed: Any  # null when none, but never left out
    reason: StrictStr
    why: StrictStr = ""

    @pydantic.model_validator(mode="before")
    @classmethod
    def _complete(cls, data: Any, info: pydantic.ValidationInfo) -> Any:
        return file_keys(data, info, required=("observed",))  # before the fields' own checks: its absence is the damage


@dataclass(config=KNOWN_ONLY)
class Verdict(Record):
    """``verdict.json``: the run's verdict, why, and every expectation's judgement (a run that ended unjudged has a
    verdict built here with its status's word)."""

    WHAT = "a verdict"
    verdict: Annotated[Word, _JUDGED]
    summary: StrictStr
    expectations: list[Judgement] = dataclasses.field(default_factory=list)
    # what the expectations describe when not the bug (the kit's ``expect_describes``: "fix" or "health"); the
    # headline's words follow it. Absent: the bug, as in every record written before it existed
    describes: Omittable[StrictStr] = None

    @pydantic.model_validator(mode="before")
    @classmethod
    def _complete(cls, data: Any, info: pydantic.ValidationInfo) -> Any:
        return file_keys(data, info, required=("expectations",))

    def summarised(self) -> VerdictSummary:
        return VerdictSummary(self.verdict, self.summary)


@dataclass
class StepAt(Record):
    """A step in flight (``in_flight``) or left on the host (``detached``, with the host's directory)."""

    WRITTEN = ("step", "remote_dir", "since", "handle")
    step: StrictStr
    since: StrictStr | None = None
    remote_dir: Omittable[StrictStr] = None
    handle: Omittable[dict[str, Any]] = None  # how its launcher finds it again (hosts/launch.py Handle: a session, a job id)


@dataclass(frozen=True)
class LeftOnHost(Record):
    """An entry of a step's directory left on the host (a link, a FIFO, a name that is not UTF-8), and why."""

    path: StrictStr  # as shown (``hosttext.shown``): the host's name, never its control characters
    reason: StrictStr

    @classmethod
    def of_listing(cls, entry: dict[str, str]) -> LeftOnHost:
        """One of the pull-back's ``not_pulled`` (``hosts/pull_listing.py``), as the record keeps it."""
        return cls(entry["path"], entry["reason"])


_WORKLOAD_KEYS = ("name", "uses", "started", "inputs", "ended", "duration_s", "exit_code", "log", "status", "reason",
                  "result_file", "not_pulled", "collected", "launch")
_CONTROL_KEYS = ("name", "uses", "started", "inputs", "status", "reason", "ended", "duration_s", "exit_code",
                 "result_file", "not_pulled", "collected")


@dataclass(config=KNOWN_ONLY)
class StepEntry(Record):
    """A step's entry in the manifest. ``result`` (its result.json) is held in memory only, never written here."""

    WHAT = "a step's entry"
    name: StrictStr
    uses: StrictStr
    status: StepStatus
    reason: StrictStr | None = None
    started: StrictStr | None = None
    ended: StrictStr | None = None
    duration_s: StrictInt | StrictFloat | None = None
    exit_code: StrictInt | None = None
    log: Omittable[StrictStr] = None  # a workload's step log; control steps have none
    result_file: Omittable[StrictStr] = None
    inputs: Omittable[list[StagedInput]] = None  # staged input files
    not_pulled: Omittable[list[LeftOnHost]] = None  # host entries left on the host, and why
    collected: Omittable[StrictBool] = None  # pulled back by ``invoke collect``
    launch: Omittable[dict[str, Any]] = None  # a batch job's facts: job id, node list, queue wait, state, exit code, signal
    result: Annotated[Any, pydantic.Field(exclude=True)] = dataclasses.field(default=None, compare=False)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _no_result_in_file(cls, data: Any, info: pydantic.ValidationInfo) -> Any:
        return file_keys(data, info, refused=("result",))  # it lives in result.json

    @property
    def has_result(self) -> bool:
        return isinstance(self.result, dict)

    def to_json(self) -> dict[str, Any]:
        """Keys in the order the runner has always written them: a workload's (it has a log) or a control step's. The
        reason is written even when null, and so is a workload's exit code (null when it timed out)."""
        workload = self.log is not None
        always = ("name", "uses", "status", "reason", "exit_code") if workload else ("name", "uses", "status", "reason")
        return {key: self.json_of(key) for key in (_WORKLOAD_KEYS if workload else _CONTROL_KEYS)
                if key in always or getattr(self, key) is not None}


@dataclass(config=KNOWN_ONLY, kw_only=True)
class Manifest(Record):
    """``manifest.json``: what ran, where, with which pins; its status; each step's entry; each artifact's hash. Its
    fields are declared in the order they are written.

    ``host``, ``images`` and ``source`` are other owners' descriptions (the inventory's host, the image entries,
    git provenance), kept as the objects they wrote; ``fingerprint`` is typed (``fingerprint.py``).
    """

    WHAT = "a run manifest"
    schema_version: StrictInt
    run_id: StrictStr
    status: RunStatus
    started: StrictStr
    ended: StrictStr | None = None
    owner: Owner
    reprokit: dict[str, Any]
    source: Omittable[dict[str, Any]] = None
    kit: Omittable[KitRef] = None
    pins: Omittable[dict[str, StrictStr]] = None
    host: Omittable[dict[str, Any]] = None
    images: Omittable[dict[str, dict[str, Any]]] = None
    secrets: Omittable[list[StrictStr]] = None  # names only
    selection: Omittable[dict[str, Any]] = None  # --only/--skip/--set
    fingerprint: Fingerprint | None = None
    verdict: VerdictSummary | None = None
    steps: list[StepEntry] = dataclasses.field(default_factory=list)
    artifacts: dict[str, Artifact] = dataclasses.field(default_factory=dict)
    pin_drift: Omittable[dict[str, dict[str, StrictStr | None]]] = None
    preflight_notes: Omittable[list[StrictStr]] = None
    in_flight: Omittable[StepAt] = None
    status_detail: Omittable[StrictStr] = None
    detached: Omittable[StepAt] = None
    host_left: Omittable[StrictStr] = None  # what of the run survived being killed on the host (its lock then stays)
    host_pruned: Omittable[StrictStr] = None  # when `invoke collect --prune` removed the host's copy kept for `not_pulled` entries

    @pydantic.model_validator(mode="before")
    @classmethod
    def _complete(cls, data: Any, info: pydantic.ValidationInfo) -> Any:
        return file_keys(data, info, required=("steps", "artifacts"))

    @property
    def kit_name(self) -> str | None:
        return self.kit.name if self.kit else None

    @property
    def host_name(self) -> str | None:
        return (self.host or {}).get("name")

    def step(self, name: str) -> StepEntry | None:
        return next((entry for entry in self.steps if entry.name == name), None)
