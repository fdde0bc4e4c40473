"""The run record's typed models: the manifest, a step's entry in it, an artifact's hash (the fingerprint's are
in ``fingerprint.py``).

Read back with ``from_json(data, where)``: a field of the wrong type is a ConfigError of one line naming the
file and the field (``runs/x/manifest.json: steps[2].status: expected one of ok|..., got 7``). ``to_json``
writes the keys in the order reprokit has always written them, so a record read and written again is the
same bytes (fields that are None are left out, except the ones a record writes as null).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reprokit.records.fields import MISSING, Fields
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.inputs import StagedInput
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


def _drop_none(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return {key: value for key, value in pairs if value is not None}


@dataclass
class Artifact:
    """A file of the record: its sha256 and size, as verified by ``invoke check-record``."""

    sha256: str
    bytes: int

    @classmethod
    def from_json(cls, fields: Fields) -> Artifact:
        digest = fields.take("sha256", str, required=True)
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            fields.fail("sha256", "64 lowercase hex digits", digest)
        return cls(digest, fields.take("bytes", int, required=True))

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "bytes": self.bytes}


@dataclass
class Owner:
    """The control process that writes the record: a ``running`` record whose owner is gone was killed."""

    pid: int
    hostname: str

    @classmethod
    def from_json(cls, fields: Fields) -> Owner:
        return cls(fields.take("pid", int, required=True), fields.take("hostname", str, required=True))

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "hostname": self.hostname}


@dataclass
class KitRef:
    """The kit a run ran: its name, file, the file's sha256 and its description."""

    name: str
    path: str | None = None
    sha256: str | None = None
    description: str | None = None

    @classmethod
    def from_json(cls, fields: Fields) -> KitRef:
        return cls(fields.take("name", str, required=True), fields.take("path", str), fields.take("sha256", str),
                   fields.take("description", str))

    def to_json(self) -> dict[str, Any]:
        return _drop_none([("name", self.name), ("path", self.path), ("sha256", self.sha256),
                           ("description", self.description)])


@dataclass
class VerdictSummary:
    """The verdict as the manifest carries it (``verdict.json`` has every expectation)."""

    verdict: Word
    summary: str

    def __post_init__(self) -> None:
        self.verdict = Word(self.verdict)

    @classmethod
    def from_json(cls, fields: Fields) -> VerdictSummary:
        return cls(fields.choice("verdict", tuple(Word)), fields.take("summary", str, required=True))

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "summary": self.summary}




@dataclass
class Judgement:
    """One expectation as the judge found it (an item of ``verdict.json``)."""

    name: str
    step: str
    status: Word  # PASS, FAIL or INCONCLUSIVE
    expected: str
    observed: Any
    reason: str
    why: str = ""

    def __post_init__(self) -> None:
        self.status = Word(self.status)

    @classmethod
    def from_json(cls, fields: Fields) -> Judgement:
        fields.only(_JUDGEMENT_FIELDS, "an expectation's judgement")
        take = fields.take
        if "observed" not in fields.data:
            fields.fail("observed", "a value (null when none)", MISSING)
        return cls(take("name", str, required=True), take("step", str, required=True), fields.choice("status", Word.judged()),
                   take("expected", str, required=True), fields.data["observed"], take("reason", str, required=True),
                   take("why", str) or "")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Verdict:
    """``verdict.json``: the run's verdict, why, and every expectation's judgement."""

    verdict: Word
    summary: str
    expectations: list[Judgement] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.verdict = Word(self.verdict)

    @classmethod
    def from_json(cls, data: Any, where: str) -> Verdict:
        fields = Fields(data, where)
        fields.only(("verdict", "summary", "expectations"), "a verdict")
        return cls(fields.choice("verdict", Word.judged()), fields.take("summary", str, required=True),
                   [Judgement.from_json(Fields(j, where, f"expectations[{i}]"))
                    for i, j in enumerate(fields.take("expectations", list, required=True))])

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "summary": self.summary, "expectations": [j.to_json() for j in self.expectations]}

    def summarised(self) -> VerdictSummary:
        return VerdictSummary(self.verdict, self.summary)


@dataclass
class StepAt:
    """A step in flight (``in_flight``) or left on the host (``detached``, with the host's directory)."""

    step: str
    since: str | None
    remote_dir: str | None = None
    handle: dict[str, str] | None = None  # how its launcher finds it again (hosts/launch.py Handle: a session, a job id)

    @classmethod
    def from_json(cls, fields: Fields) -> StepAt:
        return cls(fields.take("step", str, required=True), fields.take("since", str, type(None)),
                   fields.take("remote_dir", str), fields.take("handle", dict))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "since": self.since}
        if self.remote_dir is not None:
            out = {"step": self.step, "remote_dir": self.remote_dir, "since": self.since}
        return {**out, "handle": self.handle} if self.handle else out


@dataclass(frozen=True)
class LeftOnHost:
    """An entry of a step's directory left on the host (a link, a FIFO, a name that is not UTF-8), and why."""

    path: str  # as shown (``hosttext.shown``): the host's name, never its control characters
    reason: str

    @classmethod
    def from_json(cls, fields: Fields) -> LeftOnHost:
        return cls(fields.take("path", str, required=True), fields.take("reason", str, required=True))

    @classmethod
    def of_listing(cls, entry: dict[str, str]) -> LeftOnHost:
        """One of the pull-back's ``not_pulled`` (``hosts/pull_listing.py``), as the record keeps it."""
        return cls(entry["path"], entry["reason"])

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class StepEntry:
    """A step's entry in the manifest. ``result`` (its result.json) is held in memory only, never written here."""

    name: str
    uses: str
    status: StepStatus
    reason: str | None = None
    started: str | None = None
    ended: str | None = None
    duration_s: float | None = None
    exit_code: int | None = None
    log: str | None = None  # a workload's step log; control steps have none
    result_file: str | None = None
    inputs: list[StagedInput] | None = None  # staged input files
    not_pulled: list[LeftOnHost] | None = None  # host entries left on the host, and why
    collected: bool | None = None  # pulled back by ``invoke collect``
    launch: dict[str, Any] | None = None  # a batch job's facts: job id, node list, queue wait, state, exit code, signal
    result: dict[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.status = StepStatus(self.status)

    @property
    def has_result(self) -> bool:
        return isinstance(self.result, dict)

    @classmethod
    def from_json(cls, fields: Fields) -> StepEntry:
        fields.only(_JSON_FIELDS[cls], "a step's entry")
        take = fields.take
        return cls(
            name=take("name", str, required=True), uses=take("uses", str, required=True),
            status=fields.choice("status", tuple(StepStatus)), reason=take("reason", str, type(None)),
            started=take("started", str, type(None)), ended=take("ended", str, type(None)),
            duration_s=take("duration_s", int, float, type(None)), exit_code=take("exit_code", int, type(None)),
            log=take("log", str), result_file=take("result_file", str),
            inputs=_models(fields, "inputs", StagedInput.from_json), not_pulled=_models(fields, "not_pulled", LeftOnHost.from_json), collected=take("collected", bool), launch=take("launch", dict))

    def to_json(self) -> dict[str, Any]:
        """Keys in the order the runner has always written them: a workload's (it has a log) or a control step's."""
        inputs = None if self.inputs is None else [i.to_json() for i in self.inputs]
        not_pulled = None if self.not_pulled is None else [e.to_json() for e in self.not_pulled]
        head = [("name", self.name), ("uses", self.uses), ("started", self.started), ("inputs", inputs)]
        if self.log is not None:
            out = _drop_none(head + [("ended", self.ended), ("duration_s", self.duration_s)])
            out["exit_code"] = self.exit_code  # null when the workload timed out
            out.update(log=self.log, status=self.status, reason=self.reason)
            return {**out, **_drop_none([("result_file", self.result_file), ("not_pulled", not_pulled),
                                         ("collected", self.collected), ("launch", self.launch)])}
        out = _drop_none(head)
        out.update(status=self.status, reason=self.reason)
        return {**out, **_drop_none([("ended", self.ended), ("duration_s", self.duration_s), ("exit_code", self.exit_code),
                                     ("result_file", self.result_file), ("not_pulled", not_pulled),
                                     ("collected", self.collected)])}


def _models(fields: Fields, key: str, read: Callable[[Fields], Any]) -> list[Any] | None:
    """A list of objects, each read as its model (a bad one names ``key[i].field``)."""
    items = fields.take(key, list)
    for i, item in enumerate(items or []):
        if not isinstance(item, dict):
            fields.fail(f"{key}[{i}]", "an object", item)
    return None if items is None else [read(Fields(item, fields.where, f"{fields.path(key)}[{i}]"))
                                       for i, item in enumerate(items)]


@dataclass
class Manifest:
    """``manifest.json``: what ran, where, with which pins; its status; each step's entry; each artifact's hash.

    ``host``, ``images`` and ``source`` are other owners' descriptions (the inventory's host, the image entries,
    git provenance), kept as the objects they wrote; ``fingerprint`` is typed (``fingerprint.py``).
    """

    schema_version: int
    run_id: str
    status: RunStatus
    started: str
    owner: Owner
    reprokit: dict[str, Any]
    ended: str | None = None
    source: dict[str, Any] | None = None
    kit: KitRef | None = None
    pins: dict[str, str] | None = None
    host: dict[str, Any] | None = None
    images: dict[str, dict[str, Any]] | None = None
    secrets: list[str] | None = None  # names only
    selection: dict[str, Any] | None = None  # --only/--skip/--set
    fingerprint: Fingerprint | None = None
    verdict: VerdictSummary | None = None
    steps: list[StepEntry] = field(default_factory=list)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    pin_drift: dict[str, dict[str, str | None]] | None = None
    preflight_notes: list[str] | None = None
    in_flight: StepAt | None = None
    status_detail: str | None = None
    detached: StepAt | None = None
    host_left: str | None = None  # what of the run survived being killed on the host (its lock then stays)
    host_pruned: str | None = None  # when `invoke collect --prune` removed the host's copy kept for `not_pulled` entries

    def __post_init__(self) -> None:
        self.status = RunStatus(self.status)

    @property
    def kit_name(self) -> str | None:
        return self.kit.name if self.kit else None

    @property
    def host_name(self) -> str | None:
        return (self.host or {}).get("name")

    def step(self, name: str) -> StepEntry | None:
        return next((entry for entry in self.steps if entry.name == name), None)

    @classmethod
    def from_json(cls, data: Any, where: str) -> Manifest:
        fields = Fields(data, where)
        fields.only(_JSON_FIELDS[cls], "a run manifest")
        take = fields.take
        optional = {key: take(key, dict) for key in ("source", "pins", "host", "images", "selection", "pin_drift")}
        for key in ("pins", "images"):
            for name, value in (optional[key] or {}).items():
                if not isinstance(value, str if key == "pins" else dict):
                    fields.fail(f"{key}.{name}", "a string" if key == "pins" else "an object", value)
        return cls(
            schema_version=take("schema_version", int, required=True), run_id=take("run_id", str, required=True),
            status=fields.choice("status", tuple(RunStatus)), started=take("started", str, required=True),
            ended=take("ended", str, type(None)), owner=Owner.from_json(_child(fields, "owner", required=True)),
            reprokit=take("reprokit", dict, required=True), **optional,
            kit=KitRef.from_json(fields.child("kit")) if take("kit", dict) is not None else None,
            secrets=_strings(fields, "secrets"), fingerprint=_fingerprint(fields),
            verdict=VerdictSummary.from_json(fields.child("verdict")) if take("verdict", dict, type(None)) else None,
            steps=[StepEntry.from_json(Fields(s, where, f"steps[{i}]"))
                   for i, s in enumerate(take("steps", list, required=True))],
            artifacts={rel: Artifact.from_json(Fields(a, where, f"artifacts[{rel!r}]"))
                       for rel, a in take("artifacts", dict, required=True).items()},
            preflight_notes=_strings(fields, "preflight_notes"),
            in_flight=StepAt.from_json(fields.child("in_flight")) if take("in_flight", dict) else None,
            status_detail=take("status_detail", str),
            detached=StepAt.from_json(fields.child("detached")) if take("detached", dict) else None,
            host_left=take("host_left", str), host_pruned=take("host_pruned", str))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema_version": self.schema_version, "run_id": self.run_id, "status": self.status,
                               "started": self.started, "ended": self.ended, "owner": self.owner.to_json(),
                               "reprokit": self.reprokit}
        out.update(_drop_none([("source", self.source), ("kit", self.kit and self.kit.to_json()), ("pins", self.pins),
                               ("host", self.host), ("images", self.images), ("secrets", self.secrets),
                               ("selection", self.selection)]))
        out.update(fingerprint=self.fingerprint and self.fingerprint.to_json(),
                   verdict=self.verdict and self.verdict.to_json(), steps=[entry.to_json() for entry in self.steps],
                   artifacts={rel: a.to_json() for rel, a in self.artifacts.items()})
        out.update(_drop_none([("pin_drift", self.pin_drift), ("preflight_notes", self.preflight_notes),
                               ("in_flight", self.in_flight and self.in_flight.to_json()),
                               ("status_detail", self.status_detail),
                               ("detached", self.detached and self.detached.to_json()),
                               ("host_left", self.host_left), ("host_pruned", self.host_pruned)]))
        return out


_JUDGEMENT_FIELDS = tuple(f.name for f in dataclasses.fields(Judgement))
_JSON_FIELDS = {model: tuple(f.name for f in dataclasses.fields(model) if f.name != "result")
                for model in (StepEntry, Manifest)}


def _fingerprint(fields: Fields) -> Fingerprint | None:
    data = fields.take("fingerprint", dict, type(None))
    return None if data is None else Fingerprint.from_json(data, fields.where)


def _child(fields: Fields, key: str, required: bool = False) -> Fields:
    fields.take(key, dict, required=required)
    return fields.child(key)


def _strings(fields: Fields, key: str) -> list[str] | None:
    items = fields.take(key, list)
    for i, item in enumerate(items or []):
        if not isinstance(item, str):
            fields.fail(f"{key}[{i}]", "a string", item)
    return items
