"""Fold the parser's events into what a person asks of a server log.

Was the server up? Which autotune tactics failed, on which tiles, on how many ranks,
and when? Was there a fatal error, and what was its first traceback? What happened
when, from weight loading through autotuning to readiness?

Memory stays bounded: failures are grouped by a small key, spans keep first/last only,
and every set of names is capped.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from reprokit.triage.behaviour import OtherAutotuneFailures, Readiness
from reprokit.triage.exception_text import ExceptionFacts, analyse
from reprokit.triage.formats import PATTERNS_BY_KIND
from reprokit.triage.parser import Event, FileStats
from reprokit.triage.processes import Process
from reprokit.triage.spans import FailureRow, Span, _add_capped, _FailureGroup
from reprokit.triage.stops import StopRequests
from reprokit.triage.tactics import TableChoice
from reprokit.triage.versions import VersionsSeen

MAX_NAMES_PER_SET = 64
MAX_PROFILED_TACTICS = 4096  # tactic numbers the autotuner profiled (its DEBUG 'profiling' lines), for reconciliation
MAX_FATAL_CANDIDATES = 256  # fatal lines kept until the process model says whose process lived on
# fatal lines that report another process's death (the reporter lives on) or a context that cannot go on:
# true whatever the reporting process writes next
# the last words of a process being killed (a fatal signal's handler, std::terminate, the NCCL watchdog
# taking the process down) are deaths too, whatever the crash handler prints after them
DEATH_NOTICE_KINDS = frozenset({"sigquit_from_child", "subprocess_crashed", "exited_on_signal", "warmup_failure",
                                "vllm_worker_init_failed", "vllm_engine_init_failed", "triton_model_unavailable",
                                "signal_received", "fatal_python_error", "cpp_terminate", "nccl_watchdog_timeout",
                                "ray_actor_died", "vllm_child_died", "vllm_engine_dead", "ucx_caught_signal",
                                "sglang_watchdog_timeout", "shell_killed", "tgi_shard_failed_to_start",
                                "tgi_shard_signaled", "tgi_launcher_error"})

# the order of a server's start, used for the timeline when times tie or are missing
LIFECYCLE_KINDS = (
    "load_weight_end",
    "server_autotune_start",
    "autotune_process_start",
    "autotune_progress",
    "autotune_skip",
    "autotune_skipped_summary",
    "autotune_oom_fallback",
    "autotune_process_end",
    "server_autotune_completed",
    "cuda_graph_capture_begin",
    "cuda_graph_capture_end",
    "uvicorn_running",
    "uvicorn_startup_complete",
    "ready",
)
# where a server's start has got to, by the last lifecycle event seen (``phase``)
PHASE_OF_KIND = {
    "load_weight_begin": "loading_weights", "load_weight_end": "loading_weights", "weight_loading_progress": "loading_weights",
    "tgi_waiting_for_shard": "loading_weights",
    **dict.fromkeys(("server_autotune_start", "autotune_process_start", "autotune_progress", "autotune_skip",
                     "autotune_failure_detail", "autotune_skipped_summary", "autotune_oom_fallback",
                     "autotune_process_end", "server_autotune_completed"), "autotune"),
    **dict.fromkeys(("cuda_graph_capture_begin", "cuda_graph_capture_end", "cuda_graph_capture_progress",
                     "vllm_graph_capture_finished"), "cuda_graph_capture"),
    "vllm_engine_initialized": "engine_initialized",
    "uvicorn_running": "http_server_up", "uvicorn_startup_complete": "http_server_up",
}
# line formats that only a serving framework (or its kernel library) writes; not uvicorn's, which serves any Python
# web app (vLLM's and sglang's HTTP servers, and OPEA's micro-services: opea-project/GenAIExamples #706)
FRAMEWORK_FORMATS = ("sglang", "sglang_wrapped", "sglang_untimed", "vllm", "tensorrt_llm", "tensorrt_llm_python",
                     "flashinfer", "triton_server", "tgi")
# the line formats of the stacks the triage reads (not FlashInfer's, which any of them, or another, may print)
CLAIMED_FORMATS = ("sglang", "sglang_wrapped", "sglang_untimed", "vllm", "tensorrt_llm", "tensorrt_llm_python",
                   "triton_server", "tgi")
UVICORN_KINDS = frozenset({"uvicorn_running", "uvicorn_startup_complete"})
AUTOTUNE_EVIDENCE_KINDS = frozenset(
    ("server_autotune_start", "server_autotune_completed", "autotune_process_start", "autotune_process_end",
     "autotune_progress", "autotune_skip", "autotune_failure_detail", "autotune_skipped_summary")
)
_RUNNER_CLASS = re.compile(r"(\w+) object at 0x")


@dataclass
class FatalInfo:
    """The first fatal event (by time), its cause, and the first fatal record with a traceback."""

    kind: str
    family: str  # what died how: e.g. 'process_exception', 'signal', 'cpp_terminate', 'uncaught_exception'
    cause: str | None  # the error pattern behind it, e.g. 'cuda_illegal_memory_access'
    message: str
    exception: str | None
    at: str | None
    rank: str | None
    location: str
    traceback: str | None  # the first fatal record that carried continuation lines
    traceback_truncated: bool
    ended_by_eof: bool
    count_by_kind: Counter[str]
    process: str | None = None  # the process that died (``processes`` key), when the log says whose line it is


@dataclass(frozen=True)
class Death:
    """A serving process's death, as one rule of the table sees it: the line, the process, and why."""

    rule: str  # 'death_reported' (a line only a dying process or its parent writes) or 'serving_process_died'
    location: str
    text: str
    process: Process | None
    why: str
    order: tuple


@dataclass
class TriageSummary:
    """Everything the verdict and the report need."""

    files: list[FileStats]
    events_by_kind: Counter[str]
    ready: bool
    failures: list[FailureRow]
    notes: list[str]  # disagreements between the tactic table and what the log says
    skipped_by_op: dict[str, Span]
    skipped_totals: Counter[str]
    fatal: FatalInfo | None
    errors: dict[str, tuple[Span, str]]
    timeline: list[tuple[str, Span]]
    autotune_ran: bool
    flashinfer_logger_lines: int
    flashinfer_levels: Counter[str]
    versions: VersionsSeen = field(default_factory=VersionsSeen)
    phase: str | None = None  # the last phase of a server's start the log reached (PHASE_OF_KIND), or 'ready'
    ready_location: str | None = None  # file:line of the first readiness line
    ready_text: str | None = None  # and its message
    framework_seen: bool = False  # a line only a serving framework writes, or a lifecycle event
    table: TableChoice | None = None
    readiness: Readiness = field(default_factory=Readiness)
    other_autotune: OtherAutotuneFailures = field(default_factory=OtherAutotuneFailures)
    deaths: list[Death] = field(default_factory=list)  # in file order; the rule table reads the last of each rule
    survived: list[str] = field(default_factory=list)  # fatal-looking lines whose process lived on, and why
    recognised: bool = False  # some line of the log is one the triage knows
    profiled_tactics: frozenset[int] = frozenset()  # tactics the autotuner ran and timed ('profiling ... N, shapes=')
    oom_fallbacks: Span = field(default_factory=Span)  # '[Autotuner]: OOM detected, falling back to default tactic'

    @property
    def ranks(self) -> list[str]:
        return sorted({rank for f in self.files for rank in f.ranks})

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def unknown_lines(self) -> int:
        return sum(f.unknown_lines for f in self.files)

    @property
    def failure_count(self) -> int:
        """Failed autotune profiles of FlashInfer: each skipped tactic, and each OOM that fell back to the default
        tactic (a tactic that could not be profiled; the server lives on)."""
        return sum(row.span.count for row in self.failures) + self.oom_fallbacks.count

    @property
    def tried_tactics(self) -> frozenset[int]:
        """Tactic numbers the log shows tried: profiled, or failed while profiling."""
        failed = {row.tactic for row in self.failures if isinstance(row.tactic, int)}
        return self.profiled_tactics | failed

    @property
    def failure_tiles(self) -> list[str]:
        return sorted({row.tile for row in self.failures if row.tile})


def _tactic_value(text: str | None) -> int | str:
    try:
        return int(text or "")
    except ValueError:
        return text or "?"


# Errors that leave the CUDA context unusable: whoever logged them, the process cannot go on.
STICKY_CAUSES = frozenset({"cuda_illegal_memory_access", "cuda_illegal_instruction", "cuda_misaligned_address",
                           "cuda_launch_failure"})  # facts.errors.STICKY_CUDA_ERRORS


def _is_fatal(event: Event, facts: ExceptionFacts | None) -> bool:
    """Fatal lines are fatal; a logged error is fatal only when its cause is a sticky CUDA error."""
    if event.severity == "fatal":
        return True
    return event.severity == "error" and facts is not None and facts.cause in STICKY_CAUSES


class Summarizer:
    """Accumulate events file after file; ``summary`` resolves tactics and ranks at the end."""

    def __init__(self) -> None:
        self._files: list[FileStats] = []
        self._events_by_kind: Counter[str] = Counter()
        self._ready = False
        self._groups: dict[tuple, _FailureGroup] = {}
        self._skipped: dict[str, Span] = {}
        self._skipped_totals: Counter[str] = Counter()
        self._fatal_candidates: list[tuple[tuple[str, int, int], Event, ExceptionFacts | None]] = []
        self._fatal_first: tuple[tuple[str, int, int], Event, ExceptionFacts | None] | None = None
        self._fatal_traceback: tuple[tuple[str, int, int], Event] | None = None
        self._fatal_kinds: Counter[str] = Counter()
        self._readiness = Readiness()
        self._other_autotune = OtherAutotuneFailures()
        self._errors: dict[str, tuple[Span, str]] = {}
        self._timeline: dict[str, Span] = {}
        self._versions = VersionsSeen()
        self._kernel_archs = VersionsSeen()  # archs of the kernels named in exception texts (after the GPU's own)
        self._phase: str | None = None
        self._ready_location: str | None = None
        self._ready_text: str | None = None
        self._order = 0
        self._framework_phase = False  # a lifecycle event of a serving framework (uvicorn's own are not)
        self._uvicorn_banners = 0  # readiness banners that were uvicorn's 'Application startup complete.'
        self._stops = StopRequests()  # a fatal-looking line after the server was told to stop is no death
        self._profiled: set[int] = set()
        self._oom_fallbacks = Span()

    def add(self, event: Event) -> None:
        self._events_by_kind[event.kind] += 1
        self._order += 1
        kind = event.kind
        if kind in PHASE_OF_KIND:
            self._phase = PHASE_OF_KIND[kind]
            self._framework_phase = self._framework_phase or kind not in UVICORN_KINDS
        if self._readiness.add(event):
            self._ready = True
            self._phase = "ready"
            self._uvicorn_banners += kind == "uvicorn_startup_complete"
        self._stops.add(event)
        if self._other_autotune.add(event):
            return
        if kind == "autotune_skip":
            self._add_failure(event)
        elif kind == "autotune_profiled":
            tactic = _tactic_value(event.fields.get("tactic"))
            if isinstance(tactic, int) and len(self._profiled) < MAX_PROFILED_TACTICS:
                self._profiled.add(tactic)
        elif kind == "autotune_oom_fallback":
            self._oom_fallbacks.add(event)
        elif kind == "autotune_skipped_summary":
            op = event.fields.get("op") or "?"
            self._skipped.setdefault(op, Span()).add(event)
            self._skipped_totals[op] += int(event.fields.get("count") or 0)
        facts = analyse(event.text) if event.severity in ("error", "fatal") else None
        if facts is not None and facts.instantiation_arch:
            self._kernel_archs.add_arch(facts.instantiation_arch)
        fatal = _is_fatal(event, facts)
        if fatal:
            self._add_fatal(event, facts)
        elif event.severity == "error":
            span, message = self._errors.setdefault(kind, (Span(), facts.summary if facts else event.text[:300]))
            span.add(event)
        if kind in LIFECYCLE_KINDS or fatal:
            self._timeline.setdefault(kind, Span()).add(event)

    def add_file(self, stats: FileStats) -> None:
        self._files.append(stats)
        self._versions.merge(stats.versions)

    @property
    def versions(self) -> VersionsSeen:
        """The versions and archs the logs name (autotune and JIT cache paths, banners, pip pins), then the
        archs of kernels named in exception texts (an sm120 kernel may run on an sm121 GPU)."""
        seen = VersionsSeen()
        seen.merge(self._versions)
        seen.merge(self._kernel_archs)
        return seen

    def _add_failure(self, event: Event) -> None:
        facts = analyse(event.text)
        fields = event.fields
        key = (
            fields.get("tactic"), facts.op, fields.get("op_hint"), facts.tile, facts.tile_enum, facts.fusion,
            facts.swap_ab,
        )
        group = self._groups.setdefault(key, _FailureGroup())
        group.span.add(event)
        if event.rank is None:
            group.unattributed_by_file[event.file] += 1
        group.errors[facts.summary] += 1
        _add_capped(group.instantiation_files, facts.instantiation_file)
        if facts.instantiation_arch:
            self._kernel_archs.add_arch(facts.instantiation_arch)
        runner = fields.get("runner") or ""
        found = _RUNNER_CLASS.search(runner)
        _add_capped(group.runners, found.group(1) if found else runner[:80] or None)

    def _add_fatal(self, event: Event, facts: ExceptionFacts | None) -> None:
        """Keep a fatal-looking line until the files are read: whether its process lived on decides."""
        # untimed events sort after timed ones; in the same second, the record with the traceback (the
        # cause) before a bare notice such as sglang's 'Received sigquit'
        tie = (0 if event.continuation_lines else 1) if event.at_key else 0
        if len(self._fatal_candidates) < MAX_FATAL_CANDIDATES:
            self._fatal_candidates.append(((event.at_key or "~", tie, self._order), event, facts))

    def _resolve_deaths(self) -> tuple[list[Death], list[str]]:
        """Which fatal-looking lines are deaths (their process logged nothing alive after them), and which
        serving processes died with no such line (their last record an exception): in file order."""
        trackers = {f.path: f.processes for f in self._files}
        deaths, survived = [], []
        reported: set[tuple] = set()  # a fatal line printed again (Ray's logger repeats a signal handler's lines)
        for order, event, facts in self._stops.unstopped(self._fatal_candidates, survived):
            tracker = trackers.get(event.file)
            where = f"{event.file}:{event.line_no}"
            sticky = facts is not None and facts.cause in STICKY_CAUSES
            alive = None if event.kind in DEATH_NOTICE_KINDS or sticky or tracker is None else \
                tracker.alive_after(event.process, event.line_no)
            if alive is not None:
                survived.append(f"{where}: {event.kind} on {event.process}, but {alive[1]} at line {alive[0]}")
                continue
            self._fatal_kinds[event.kind] += 1
            report = (event.kind, tuple(sorted(event.fields.items())))
            if event.fields and report in reported:
                continue
            reported.add(report)
            if self._fatal_first is None or order < self._fatal_first[0]:
                self._fatal_first = (order, event, facts)
            if event.continuation_lines and (self._fatal_traceback is None or order < self._fatal_traceback[0]):
                self._fatal_traceback = (order, event)
            why = "it reports a death" if event.kind in DEATH_NOTICE_KINDS else (
                "a sticky CUDA error: the process cannot go on" if sticky else
                f"nothing after it shows {event.process} alive")
            process = tracker.processes.get(event.process) if tracker else None
            deaths.append(Death("death_reported", where, event.text.split("\n", 1)[0][:300], process, why,
                                (self._files.index(next(f for f in self._files if f.path == event.file)),
                                 event.line_no)))
        for index, stats in enumerate(self._files):
            for proc in stats.processes.dead():
                if proc.serving and proc.exception is not None and not self._stops.before(stats.path, proc.exception.line):
                    exc = proc.exception
                    line, text = (exc.exception_line, exc.exception) if exc.exception else (exc.line, exc.text)
                    deaths.append(Death("serving_process_died", f"{stats.path}:{line}", text, proc,
                                        proc.why(), (index, exc.line)))
        deaths.sort(key=lambda d: d.order)
        return deaths, survived

    def summary(self, table: TableChoice) -> TriageSummary:
        levels: Counter[str] = Counter()
        for stats in self._files:
            levels.update(stats.flashinfer_levels)
        notes: list[str] = []
        deaths, survived = self._resolve_deaths()
        framework_seen = self._framework_shown()
        if not framework_seen and self._uvicorn_banners:  # uvicorn started a web app, not a serving framework
            del self._readiness.by["banner"]
            self._ready = bool(self._readiness.by)
            self._phase = self._phase if self._ready else "http_server_up"
        for stats in self._files:
            for proc in stats.processes.processes.values():
                if proc.exception is not None and proc.exception.request_handler:  # a request reached the server
                    where = f"{stats.path}:{proc.exception.line}"
                    self._readiness.sighted("traffic", where, proc.exception.text)
                    self._ready = True
        best = self._readiness.best()
        if best is not None:
            self._ready_location, self._ready_text = best[1].first, best[1].first_text
        return TriageSummary(
            files=self._files,
            events_by_kind=self._events_by_kind,
            ready=self._ready,
            failures=self._failure_rows(table, notes),
            notes=notes,
            skipped_by_op=self._skipped,
            skipped_totals=self._skipped_totals,
            fatal=self._fatal_info(deaths),
            errors=self._errors,
            timeline=sorted(
                self._timeline.items(),
                key=lambda item: (
                    item[1].first_key or "~",
                    LIFECYCLE_KINDS.index(item[0]) if item[0] in LIFECYCLE_KINDS else len(LIFECYCLE_KINDS),
                ),
            ),
            autotune_ran=any(self._events_by_kind[k] for k in AUTOTUNE_EVIDENCE_KINDS),
            flashinfer_logger_lines=sum(levels.values()),
            flashinfer_levels=levels,
            versions=self.versions,
            phase="dead" if deaths else self._phase or ("starting" if framework_seen else None),
            ready_location=self._ready_location,
            ready_text=self._ready_text,
            framework_seen=framework_seen,
            table=table,
            readiness=self._readiness,
            other_autotune=self._other_autotune,
            deaths=deaths,
            survived=survived,
            recognised=bool(self._events_by_kind) or any(
                n not in ("unknown", "blank") and c for f in self._files for n, c in f.lines_by_format.items()),
            profiled_tactics=frozenset(self._profiled),
            oom_fallbacks=self._oom_fallbacks,
        )

    def _framework_shown(self) -> bool:
        """Some line only a serving framework writes: its formats, lifecycle, processes, versions, or readiness other
        than uvicorn's 'Application startup complete.' (which vLLM's API server logs, and any web app)."""
        ready = any(how != "banner" or seen.count > self._uvicorn_banners for how, seen in self._readiness.by.items())
        return self._framework_phase or ready or any(
            f.lines_by_format[name] for f in self._files for name in FRAMEWORK_FORMATS) or any(
            p.serving for f in self._files for p in f.processes.processes.values()) or any(
            c in self._versions.by_component for c in ("sglang", "vllm", "tensorrt_llm"))

    def _failure_rows(self, choice: TableChoice, notes: list[str]) -> list[FailureRow]:
        """Apply the tactic table, attribute single-rank files, and merge groups that now coincide.

        What the exception text shows (the dispatch frame's tile, the gemm1/gemm2 frame) is
        direct evidence of the kernel that failed, so it wins; the table fills in what the
        text does not say. Where they disagree, ``notes`` says so: a wrong FlashInfer
        version is the usual reason.
        """
        sole_rank = {s.path: next(iter(s.ranks)) for s in self._files if len(s.ranks) == 1 and not s.ranks_overflowed}
        rows: dict[tuple, FailureRow] = {}
        table = choice.table
        for (tactic_text, text_op, op_hint, tile, tile_enum, fusion, swap_ab), group in self._groups.items():
            tactic = _tactic_value(tactic_text)
            entry, reason, detail = None, choice.reason, choice.detail
            if not isinstance(tactic, int):
                reason, detail = "compound_tactic", f"tactic {tactic} is a tuple: the MoE tables number single tactics"
            elif table is not None:
                entry, reason, detail = table.resolve(tactic, text_op or op_hint)
            mapping = {"status": "mapped" if entry else "unmapped", "reason": None if entry else reason,
                       "detail": choice.detail if entry else detail, "table": str(table.path) if table else None}
            source = "exception_text" if tile else None
            op = text_op or (entry.op if entry else None) or op_hint
            if table is not None and entry is not None:
                said = {"tile": tile, "fusion": fusion, "swap_ab": swap_ab}
                table_says = {"tile": entry.tile, "fusion": entry.fusion, "swap_ab": entry.swap_ab}
                differs = [f"{k} {said[k]} (exception text) vs {table_says[k]} (table)"
                           for k in said if said[k] is not None and said[k] != table_says[k]]
                note = f"tactic {tactic} of {entry.op}: {'; '.join(differs)} in {table.path}"
                if differs and note not in notes:
                    notes.append(note)
                source = source or "tactics_file"
                tile, fusion = tile or entry.tile, fusion or entry.fusion
                swap_ab = entry.swap_ab if swap_ab is None else swap_ab
                tile_enum = tile_enum or (entry.tile_enum if tile == entry.tile else None)
            span = Span()
            span.merge(group.span)
            unattributed = 0
            for path, count in group.unattributed_by_file.items():
                if path in sole_rank:
                    _add_capped(span.ranks, sole_rank[path])
                else:
                    unattributed += count
            key = (op, tactic, tile, fusion, swap_ab)
            row = rows.get(key)
            if row is None:
                rows[key] = FailureRow(op, tactic, tile, tile_enum, fusion, swap_ab, source, span, unattributed,
                                       Counter(group.errors), set(group.instantiation_files), set(group.runners),
                                       mapping)
                continue
            row.span.merge(span)
            row.unattributed += unattributed
            row.errors.update(group.errors)
            row.tile_enum = row.tile_enum or tile_enum
            for name in group.instantiation_files:
                _add_capped(row.instantiation_files, name)
            for name in group.runners:
                _add_capped(row.runners, name)
        return sorted(rows.values(), key=lambda r: (r.op or "", isinstance(r.tactic, str), r.tactic))

    def _fatal_info(self, deaths: list[Death]) -> FatalInfo | None:
        if self._fatal_first is None:
            died = next((d for d in deaths if d.rule == "serving_process_died"), None)
            if died is None or died.process is None or died.process.exception is None:
                return None
            exc = died.process.exception
            return FatalInfo(kind="process_died", family=f"process_died_{exc.how}", cause=None, message=died.text,
                             exception=exc.exception, at=None, rank=None, location=died.location, traceback=None,
                             traceback_truncated=False, ended_by_eof=False, count_by_kind=Counter(), process=died.process.key)
        _, event, facts = self._fatal_first
        traceback_event = self._fatal_traceback[1] if self._fatal_traceback else None
        family = PATTERNS_BY_KIND[event.kind].fatal_family or event.kind
        if event.kind == "python_traceback" and event.fields.get("uncaught"):
            family = "uncaught_exception"
        return FatalInfo(
            kind=event.kind,
            family=family,
            cause=facts.cause if facts else None,
            message=event.text.split("\n", 1)[0][:300],
            exception=facts.final_exception if facts else None,
            at=event.at,
            rank=event.rank,
            location=f"{event.file}:{event.line_no}",
            traceback=traceback_event.text if traceback_event else None,
            traceback_truncated=traceback_event.text_truncated if traceback_event else False,
            ended_by_eof=event.ended_by_eof,
            count_by_kind=self._fatal_kinds,
            process=event.process,
        )
