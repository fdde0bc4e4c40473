"""Streaming parser: log files in, typed events out, in constant memory.

Speed comes from looking at few lines. In a server log almost every line is an sglang
line (``[date ranks] message``) whose message says nothing the triage needs. Per region
of whole lines (see ``reader``), two scans run in C (``scan``):

1. ``bytes.count`` of newlines gives the line count;
2. one Hyperscan pass finds every line that does *not* start like sglang's prefix
   (FlashInfer's logger, tracebacks, tqdm bars, vLLM and torch prefixes, anything unknown),
   and the sglang lines whose message starts with the ``lead`` of a server pattern
   (readiness, a fatal error, autotune start, ...).

Only those lines are decoded and classified in Python. An sglang line that neither scan
picked is counted as ``sglang`` and otherwise skipped: by construction it matches no
pattern (sglang lines are classified by the start of their message).

Multi-line records (a tactic's exception text with its C++ backtrace, a Python
traceback) are collected per stream: the lines with no prefix of their own that follow a
record-opening line belong to it, until the next prefixed line of that stream. A vLLM
worker's lines form their own stream (each carries ``(Worker_... pid=N)``); all other
lines share the file's stream. Records are emitted when they close.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.triage import formats
from reprokit.triage.formats import LINE_FORMATS_BY_NAME
from reprokit.triage.processes import ProcessTracker
from reprokit.triage.reader import ReadStats, iter_regions, open_log
from reprokit.triage.scan import LineScan, _count_newlines
from reprokit.triage.versions import VersionsSeen

MAX_RECORD_TEXT_CHARS = 64 * 1024  # text kept per record; the first traceback is what people read
MAX_OPEN_RECORDS = 64  # streams with an open record at once (vLLM workers); the oldest closes first
MAX_RANKS_TRACKED = 1024  # distinct rank labels kept per file; garbage input could invent millions
MAX_EVIDENCE_CHARS = 300

# sglang's prefix starts '[2026-', '[02-19 ' or '[10:05:'; TensorRT-LLM's Python logger '[11/21/2024-' and a
# pasted line counter '[80746] ' are not sglang lines. Ray's '[2024-06-13 16:11:51,588 E 1 1] f.cc:228: '
# is sglang-shaped here: the trigger scan picks it by its '] file.cc:line: ' (_RAY_GLOG_LEAD).
_SGLANG_SHAPED = re.compile(rb"\[(?:[0-9]{4}-|[0-9][0-9][-:])")
# The same start denied, for Hyperscan (no lookahead): a newline, then a start no sglang line has. Each branch
# holds a whole case, spelt with wide classes ('.', [^0-9]): a narrow one ([0-9]) would have Hyperscan list the
# digits' combinations as literals, found at every line (0.75 against 0.53 s/GiB). Branches may overlap.
_NOT_SGLANG_LINE = rb"\n(?:[^\[]|\[[^0-9]|\[.[^0-9]|\[..[^-:0-9]|\[..[^-:\n][^0-9]|\[..[^-:\n].[^-])"
_SGLANG_SHAPED_TEXT = re.compile(r"\[(?:[0-9]{4}-|[0-9][0-9][-:])")
_RAY_GLOG_LEAD = rb"[a-z_0-9]+\.cc:[0-9]+: "


_SCAN = LineScan(_NOT_SGLANG_LINE,
                 [p.lead.encode() for p in formats.SERVER_PATTERNS if p.on_sglang_lines] + [_RAY_GLOG_LEAD])
# once sglang said it is ready, what its traffic looks like (batches, access lines) no longer needs reading
_SCAN_READY = LineScan(
    _NOT_SGLANG_LINE,
    [p.lead.encode() for p in formats.SERVER_PATTERNS if p.on_sglang_lines and not p.readiness] + [_RAY_GLOG_LEAD])
# the framework a line format belongs to: the stack of the process that writes it
_STACK_OF_FORMAT = {"vllm": "vllm", "tensorrt_llm": "tensorrt_llm", "tensorrt_llm_python": "tensorrt_llm",
                    "flashinfer": "flashinfer", "torch_c10": "torch", "sglang_untimed": "sglang", "tgi": "tgi"}
_STACK_OF_LOGGER = {"sglang": "sglang", "vllm": "vllm", "tensorrt_llm": "tensorrt_llm"}
_SGLANG = LINE_FORMATS_BY_NAME["sglang"].compiled
_VLLM_WORKER = LINE_FORMATS_BY_NAME["vllm_worker"].compiled
_TORCH_RANK = LINE_FORMATS_BY_NAME["torch_rank"].compiled
_TORCHRUN_TEE = LINE_FORMATS_BY_NAME["torchrun_tee"].compiled  # '[default3]:': one rank process per prefix
_HEADED_FORMATS = tuple(
    LINE_FORMATS_BY_NAME[name]
    for name in ("flashinfer", "logger_named", "vllm", "torch_c10", "triton_server", "ray_glog", "ray_serve", "tgi",
                 "rust_tracing",
                 "uvicorn", "tensorrt_llm", "tensorrt_llm_python", "sglang_untimed", "progress")
)
_WRAPPERS = formats.WRAPPER_FORMATS
_ANY_WRAPPER = re.compile("|".join(f"(?:{fmt.regex})" for fmt in _WRAPPERS))  # one match call, same order
MAX_RECORDS_PER_LINE = 16  # records glued on one physical line (tqdm redraws without carriage returns)
# the line before a bare traceback says the traceback was logged (logger.exception), not uncaught
_LOGGED_TRACEBACK_MARKERS = (b"ERROR", b"CRITICAL", b"xception", b"rror:", b"Traceback")
_CONTINUATION_FORMATS = formats.CONTINUATION_FORMATS
_BACKTRACE_FRAME = next(f.compiled for f in _CONTINUATION_FORMATS if f.name == "backtrace_frame")  # getTrace's
_PATTERNS_FOR_FORMAT = formats.PATTERNS_FOR_FORMAT


@dataclass(slots=True)
class Event:
    """One thing a log said: a pattern's ``kind``, where and when, and its record's text."""

    kind: str
    severity: str
    fmt: str  # the line format it came from: sglang, flashinfer, vllm, uvicorn, bare, ...
    file: str
    line_no: int
    at: str | None  # the time as the log printed it
    at_key: str | None  # the same time as 'MM-DD HH:MM:SS.fff', for ordering across formats
    rank: str | None  # e.g. 'TP3 EP3' (sglang), 'DP0 EP0' (vLLM worker), 'rank3' (torch)
    level: str | None
    fields: dict[str, str | None]
    text: str = ""  # the message and the record's continuation lines, capped
    continuation_lines: int = 0
    text_truncated: bool = False
    ended_by_eof: bool = False  # the record was still open when the file ended
    process: str = "main"  # the process that wrote it (``processes.ProcessTracker`` key)


@dataclass
class FileStats:
    """Counts for one file; ``lines_by_format`` sums to ``lines``."""

    path: str
    read: ReadStats = field(default_factory=ReadStats)
    lines: int = 0
    lines_by_format: Counter[str] = field(default_factory=Counter)
    flashinfer_levels: Counter[str] = field(default_factory=Counter)
    ranks: set[str] = field(default_factory=set)
    ranks_overflowed: bool = False
    records_after_progress_bar: int = 0  # records glued to the end of a tqdm bar on one line
    records_mid_line: int = 0  # other records that start in the middle of a line (after a test id, ...)
    versions: VersionsSeen = field(default_factory=VersionsSeen)
    last_line: str = ""  # where the file ends: the evidence of a log that never became ready
    processes: ProcessTracker = field(default_factory=ProcessTracker)

    @property
    def unknown_lines(self) -> int:
        return self.lines_by_format["unknown"]


@dataclass(slots=True)
class _Record:
    event: Event
    chars: int  # length of event.text, kept to cap it without measuring it again
    key: str  # the process that wrote it


def _time_key(fmt: str, ts: str | None) -> str | None:
    """'MM-DD HH:MM:SS.fff' for any of the formats' timestamps (the year is often absent)."""
    if ts is None:
        return None
    if fmt == "torch_c10":  # 'MMDD HH:MM:SS', or 'MDD HH:MM:SS' before October
        date, _, clock = ts.partition(" ")
        date = date.zfill(4)
        return f"{date[:2]}-{date[2:]} {clock}.000"
    if fmt == "tensorrt_llm_python":  # 'MM/DD/YYYY-HH:MM:SS'
        return f"{ts[:2]}-{ts[3:5]} {ts[11:]}.000"
    date_time, _, millis = ts.partition(",")
    if len(date_time) == 8:  # time only
        date_time = "00-00 " + date_time
    elif len(date_time) == 19:  # with the year
        date_time = date_time[5:]
    return f"{date_time}.{millis or '000'}"


def _worker_rank(worker: str | None, rank: str | None) -> str | None:
    if rank is not None:
        return f"rank{rank}"
    if worker is None:  # Ray's unnamed actor '(pid=N, ip=A)'
        return None
    tags = [part for part in worker.split("_")[1:] if formats.SGLANG_RANK_TAG.fullmatch(part)]
    return " ".join(tags) or None


class FileParser:
    """Parse one file's regions; ``feed`` and ``finish`` return the events in file order."""

    def __init__(self, path: str, stats: FileStats) -> None:
        self._path = path
        self._stats = stats
        self._open: OrderedDict[str | None, _Record] = OrderedDict()
        self._events: list[Event] = []
        self._last_progress_op: str | None = None
        self._lines_before_region = 0
        self._previous_line_read = True  # the line before the current one was decoded (no sglang line skipped)
        self._region = b""
        self._region_start = 0
        self._cursor_offset = 0
        self._cursor_line = 0
        self._region_end = 0  # the current region's end and line count: a line number is counted from the nearer side
        self._region_lines = 0
        self._previous_tail = b""  # the last line of the previous region
        self._counting = True  # False for the second record of a physical line: lines are counted once
        self._stream_last: OrderedDict[str, str] = OrderedDict()  # each worker stream's last line
        self._stream_before = ""  # the line before the current one, in the current line's stream
        self._tracker = stats.processes
        self._sglang_ready = False  # sglang's banner was seen: its traffic lines need no reading

    def feed(self, region: bytes, start: int, end: int) -> list[Event]:
        """Parse the whole lines ``region[start:end]``; return the events that completed."""
        self._region, self._region_start, self._cursor_offset, self._cursor_line = region, start, start, 0
        line_count = _count_newlines(region, start, end)
        self._region_end, self._region_lines = end, line_count
        not_sglang, triggered = (_SCAN_READY if self._sglang_ready else _SCAN).lines(region, start, end)
        starts = not_sglang if _SGLANG_SHAPED.match(region, start) else [start, *not_sglang]
        if line_count > len(starts):
            self._stats.lines_by_format["sglang"] += line_count - len(starts)
        if triggered:
            starts = sorted(set(starts).union(triggered))
        expected = start if self._previous_line_read else -1
        for line_start in starts:
            if line_start != expected:  # an sglang line was skipped: it ends the file stream's record
                self._close(None)
            line_end = region.index(b"\n", line_start)
            self._line(region[line_start:line_end], line_start)
            expected = line_end + 1
        self._previous_line_read = expected == end
        self._previous_tail = region[region.rfind(b"\n", start, end - 1) + 1:end - 1]
        self._stats.lines += line_count
        self._lines_before_region += line_count
        events, self._events = self._events, []
        return events

    def finish(self) -> list[Event]:
        self._stats.last_line = self._previous_tail.decode("utf-8", "replace")[:MAX_EVIDENCE_CHARS]
        for stream in list(self._open):
            self._close(stream, by_eof=True)
        events, self._events = self._events, []
        return events

    # --- one line

    def _count(self, fmt: str) -> None:
        if self._counting:
            self._stats.lines_by_format[fmt] += 1

    def _line(self, raw: bytes, offset: int) -> None:
        text = raw.decode("utf-8", "replace")
        self._stats.versions.scan(text)
        if _SGLANG_SHAPED.match(raw):  # counted as sglang in feed()
            self._close(None)
            if not self._sglang(text, offset, None):  # sglang-shaped but not sglang's: Ray's logger, ...
                self._stats.lines_by_format["sglang"] -= 1  # feed() counted it as sglang's; its own format counts it
                self._text_line(text, offset, 0)
            return
        self._text_line(text, offset, 0)

    def _sglang(self, text: str, offset: int, stream: str | None) -> bool:
        match = _SGLANG.match(text)
        if match is None:
            return False
        ranks = match["ranks"].strip() or None
        self._note_rank(ranks)
        key = f"sglang {ranks}" if ranks else "sglang"
        message = text[match.end():]
        self._tracker.note(key, self._line_no(offset), None, message, "sglang")
        self._message("sglang", message, offset, match["ts"], None, ranks, stream, key)
        return True

    def _strip_wrappers(self, text: str) -> str:
        """Remove what log collectors and launchers put in front of a line (docker, compose, journald, ...)."""
        text = formats.strip_terminal_escapes(text)
        for _ in range(len(_WRAPPERS)):
            match = _ANY_WRAPPER.match(text)
            if match is None:
                break
            text = text[match.end():]
        return text[:-1].rstrip() if text.endswith("│") else text  # a k9s pane's closing border

    def _text_line(self, text: str, offset: int, glued: int) -> None:
        """A line that is not a plain sglang line: wrappers, a worker prefix, then its own format."""
        text = self._strip_wrappers(text)
        if _SGLANG_SHAPED_TEXT.match(text):
            self._close(None)
            if self._sglang(text, offset, None):
                self._count("sglang_wrapped")  # 'sglang' counts the lines the fast scan takes as sglang's
                return
        stream: str | None = None
        rank: str | None = None
        key = "main"
        prefix = _VLLM_WORKER.match(text) or _TORCH_RANK.match(text) or _TORCHRUN_TEE.match(text)
        if prefix is not None and prefix.re is _VLLM_WORKER and (inner := _VLLM_WORKER.match(text, prefix.end())):
            prefix = inner  # '(EngineCore_DP1 pid=N) (Worker_DP1_TP1_EP3 pid=M)': the worker wrote it
        if prefix is not None:
            stream = prefix.group(0).strip()
            groups = prefix.groupdict()
            rank = _worker_rank(groups["worker"], groups["rank"]) if "worker" in groups else f"rank{groups['rank']}"
            key = stream.strip("()[]:") if "worker" in groups else f"rank{groups['rank']}"
            self._note_rank(rank)
            text = self._strip_wrappers(text[prefix.end():])
            if prefix.re is _VLLM_WORKER and (inner := _TORCH_RANK.match(text)) is not None:
                text = text[inner.end():]
            if _SGLANG_SHAPED_TEXT.match(text):  # sglang in a Ray actor: '(SGLangEngine pid=N) [date TP0] ...'
                self._close(stream)
                if self._sglang(text, offset, stream):
                    self._count("sglang_wrapped")
                    return
        if glued < MAX_RECORDS_PER_LINE and self._split_glued(text, offset, stream, rank, glued):
            return
        if stream is not None:
            self._remember(stream, text)
        for fmt in _HEADED_FORMATS:
            head = fmt.head(text)
            if head is not None:
                self._close(stream)
                self._count(fmt.name)
                start, groups = head
                level = groups.get("level")
                if fmt.name == "flashinfer" and level:
                    self._stats.flashinfer_levels[level] += 1
                line_rank = rank
                if groups.get("ranks"):
                    line_rank = groups["ranks"]
                elif groups.get("rank"):
                    line_rank = f"rank{groups['rank']}"
                self._note_rank(line_rank)
                message = text[start:]
                stack = _STACK_OF_FORMAT.get(fmt.name) or _STACK_OF_LOGGER.get((groups.get("logger") or "").split(".")[0])
                self._tracker.note(key, self._line_no(offset), level, message, stack)
                self._message(fmt.name, message, offset, groups.get("ts"), level, line_rank, stream, key)
                return
        self._bare(text, offset, stream, rank, key)

    def _split_glued(self, text: str, offset: int, stream: str | None, rank: str | None, glued: int) -> bool:
        """A record written on the same line after a tqdm bar or another program's output: two records."""
        cut = -1
        if "|" in text and (bar := formats.PROGRESS_BAR_END.search(text)) is not None and text[bar.end():].strip():
            cut = bar.end()
            self._stats.records_after_progress_bar += 1
        elif "flashinfer.jit: " in text and (record := formats.FLASHINFER_RECORD_START.search(text, 1)) is not None:
            cut = record.start()
            self._stats.records_mid_line += 1
        if cut == -1:
            return False
        head, tail = text[:cut], text[cut:]
        self._text_line(head if stream is None else f"{stream} {head}", offset, MAX_RECORDS_PER_LINE)
        counting, self._counting = self._counting, False
        try:
            self._text_line(tail, offset, glued + 1)
        finally:
            self._counting = counting
        return True

    def _bare(self, text: str, offset: int, stream: str | None, rank: str | None, key: str) -> None:
        record = self._open.get(stream)
        if record is None and stream is None and _BACKTRACE_FRAME.match(text):
            record = self._tactic_record_for_frames()
        if record is not None:
            self._count("continuation")
            self._append(record, text)
            self._tracker.continuation(record.key, self._line_no(offset), text, record.event.severity)
            return
        if not text.strip():
            self._count("blank")
            return
        self._tracker.note(key, self._line_no(offset), None, text)
        if text.lstrip().startswith("raise "):  # a traceback's source line is code, not a message
            self._count("python_frame")
            return
        if self._message("bare", text, offset, None, None, rank, stream, key):
            self._count("event")
            return
        for fmt in _CONTINUATION_FORMATS:
            if fmt.compiled.match(text):
                self._count(fmt.name)
                return
        self._count("unknown")

    def _remember(self, stream: str, text: str) -> None:
        """Make ``text`` the stream's last line; the one before it is what ``_uncaught`` reads."""
        self._stream_before = self._stream_last.pop(stream, "")
        self._stream_last[stream] = text
        if len(self._stream_last) > MAX_OPEN_RECORDS:
            self._stream_last.popitem(last=False)

    def _previous_line(self, offset: int) -> bytes:
        if offset > self._region_start:
            return self._region[self._region.rfind(b"\n", self._region_start, offset - 1) + 1:offset - 1]
        return self._previous_tail

    def _uncaught(self, offset: int, stream: str | None) -> bool:
        """A bare traceback is uncaught unless the line before it (in its worker's stream) logged an error."""
        if stream is not None:
            previous = self._stream_before.encode("utf-8", "replace")
        else:
            previous = self._previous_line(offset)
        return not any(marker in previous for marker in _LOGGED_TRACEBACK_MARKERS)

    def _message(
        self, fmt: str, message: str, offset: int, ts: str | None, level: str | None, rank: str | None,
        stream: str | None, key: str,
    ) -> bool:
        """Match ``message`` against the patterns of its format; emit or open a record. True if one matched."""
        for pattern in _PATTERNS_FOR_FORMAT[fmt]:
            found = pattern.find(message)
            if found is None:
                continue
            severity = pattern.severity
            if severity == "fatal" or pattern.kind == "python_traceback":
                self._tracker.suspect(key)
            if pattern.kind == "python_traceback" and fmt == "bare" and self._uncaught(offset, stream):
                severity, found["uncaught"] = "fatal", "true"
            if pattern.kind == "ready":
                self._sglang_ready = True
            elif pattern.kind == "http_request" and (found.get("status") or "").startswith("2"):
                self._tracker.served(self._line_no(offset))
            if pattern.kind == "autotune_progress":
                self._last_progress_op = found["op"]
            elif pattern.kind in ("autotune_skip", "autotune_failure_detail"):
                found["op_hint"] = self._last_progress_op
            event = Event(
                kind=pattern.kind, severity=severity, fmt=fmt, file=self._path, line_no=self._line_no(offset),
                at=ts, at_key=_time_key(fmt, ts), rank=rank, level=level, fields=found,
                text=message[:MAX_RECORD_TEXT_CHARS], text_truncated=len(message) > MAX_RECORD_TEXT_CHARS,
                process=key,
            )
            if pattern.multiline:
                self._open_record(event, stream, key)
            else:
                self._events.append(event)
            return True
        return False

    # --- records

    def _tactic_record_for_frames(self) -> _Record | None:
        """The last record opened if it is a skipped tactic's: an unprefixed frame after it is that exception's (a
        prefixer that tagged the first line only), never a crash dump of the file's main process."""
        record = self._open[next(reversed(self._open))] if self._open else None
        return record if record is not None and record.event.kind in ("autotune_skip", "autotune_failure_detail") else None

    def _open_record(self, event: Event, stream: str | None, key: str) -> None:
        self._close(stream)
        if len(self._open) >= MAX_OPEN_RECORDS:
            self._close(next(iter(self._open)))
        self._open[stream] = _Record(event, len(event.text), key)

    def _append(self, record: _Record, text: str) -> None:
        event = record.event
        event.continuation_lines += 1
        if record.chars + len(text) + 1 > MAX_RECORD_TEXT_CHARS:
            event.text_truncated = True
            return
        event.text += "\n" + text
        record.chars += len(text) + 1

    def _close(self, stream: str | None, *, by_eof: bool = False) -> None:
        record = self._open.pop(stream, None)
        if record is not None:
            record.event.ended_by_eof = by_eof
            self._events.append(record.event)

    # --- bookkeeping

    def _line_no(self, offset: int) -> int:
        """1-based line number of the line at ``offset`` of the current region (counted on demand)."""
        if self._region_end - offset < offset - self._cursor_offset:  # nearer the end: count back from it
            self._cursor_line = self._region_lines - self._region.count(b"\n", offset, self._region_end)
        else:
            self._cursor_line += self._region.count(b"\n", self._cursor_offset, offset)
        self._cursor_offset = offset
        return self._lines_before_region + self._cursor_line + 1

    def _note_rank(self, rank: str | None) -> None:
        if rank is None or rank in self._stats.ranks:
            return
        if len(self._stats.ranks) >= MAX_RANKS_TRACKED:
            self._stats.ranks_overflowed = True
            return
        self._stats.ranks.add(rank)


@dataclass
class ParsedFile:
    """A file's events, as a stream, and its stats once the stream is exhausted."""

    stats: FileStats
    events: Iterator[Event]


def parse_file(path: Path) -> ParsedFile:
    """Open ``path`` now (``ConfigError`` if it cannot be read) and parse it lazily."""
    stats = FileStats(path=str(path))
    resources = ExitStack()
    stream, stats.read.gzip = resources.enter_context(open_log(path))

    def events() -> Iterator[Event]:
        with resources:
            parser = FileParser(str(path), stats)
            for region, start, end in iter_regions(stream, stats.read):
                yield from parser.feed(region, start, end)
            yield from parser.finish()

    return ParsedFile(stats, events())


def parse_lines(lines: Iterable[str], path: str = "<lines>") -> tuple[list[Event], FileStats]:
    """Parse lines already split and clean (tests, examples): the parser without the reader."""
    stats = FileStats(path=path)
    parser = FileParser(path, stats)
    region = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
    events = parser.feed(region, 0, len(region)) + parser.finish() if region else parser.finish()
    return events, stats
