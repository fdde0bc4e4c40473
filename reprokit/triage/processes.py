"""Which process wrote each line, and whether it lived on: the model behind FATAL.

A server is several processes writing one log: sglang's scheduler ranks (``[... TP3 EP3]``),
vLLM's API server, engine cores and workers (``(EngineCore_DP0 pid=N)``, ``(Worker_TP1 pid=N)``),
Ray actors (``(RayWorkerWrapper pid=N, ip=A)``), torch ranks (``[rank3]:``), TensorRT-LLM's
executor, an MPI rank. The parser tells the ``ProcessTracker``, for every line it reads, which
process wrote it (``key``: the innermost prefix, else the file's own process ``main``), at which
level, and the message. The tracker keeps, per process, only what a verdict needs:

- its last record (line and text);
- the exception its latest records are, if they are one: a Python traceback raised or logged at
  ERROR/CRITICAL, a crash handler's dump (CPython faulthandler frames, a native backtrace);
  where it started, the exception line it ended with, and what its file paths say of the stack;
- the first line after that exception that shows the process alive: a later line of its own that
  is not teardown, or a request served after it.

A process is **dead** when its last exception has nothing after it that shows it alive; a
traceback through a request handler (vLLM's ``entrypoints/openai/serving_*``) is a request that
failed in a live server, not a death. Memory is bounded: ``MAX_PROCESSES`` processes with
fixed-size fields, whatever the log's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_PROCESSES = 256  # distinct processes kept per file; the oldest quiet one goes first
MAX_TEXT_CHARS = 300
ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "E", "F", "FATAL"})
QUIET_LEVELS = frozenset({"INFO", "WARNING", "DEBUG", "I", "W", "V", "D", "TRACE", "VERBOSE"})
SERVING_STACKS = frozenset({"sglang", "vllm", "tensorrt_llm"})

# what a file path in a traceback says about the stack (site-packages/<name>/... or a source tree)
_STACK_OF_PATH = re.compile(r"/(sglang|vllm|tensorrt_llm|flashinfer|ray|torch|triton)/")
_PYTHON_FRAME = re.compile(r'\s*File "([^"]*)", line \d+(,| in )')
# a native frame printed by a crash handler: glibc backtrace_symbols ('lib.so(+0x1a) [0x7f..]'),
# Open MPI's '[host:pid] [ 8] lib.so(func+0xbd)[0x7f..]'
_NATIVE_FRAME = re.compile(r"\s*(\[[^\]]+\] \[ *\d+\] )?\S+\([^)]*\+0x[0-9a-fA-F]+\) ?\[0x[0-9a-fA-F]+\]")
# a frame of TensorRT-LLM's C++ backtrace (tllmException.cpp getTrace: '%-3d %*p %s + %zd')
_GETTRACE_FRAME = re.compile(r"\d+ +0x[0-9a-fA-F]+ ")
# a native frame that says why the process is going down: what the dump is cited at
_DEATH_FRAME = re.compile(r"TerminateHandler\(|ncclCommWatchdog\(|std::terminate\(|__cxa_throw|\babort\(")
_TRACEBACK_HEADER = "Traceback (most recent call last):"
# the line that ends a traceback: 'RuntimeError: ...', 'ray.exceptions.RayTaskError(ModuleNotFoundError): ...'
_EXCEPTION_LINE = re.compile(r"([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt))(\([^)]*\))?(:|$)")
_CHAINED = re.compile(r"During handling of the above exception|The above exception was the direct cause")
_CODE_LINE = re.compile(r"\s+\S|[\^~ ]+$")  # the source line and caret markers under a frame
# teardown and reports of another's death: later lines that do not show a process alive
_TEARDOWN = re.compile(
    r"(?i)shut ?down|shutting|exit|terminat|killed|died|destroy_process_group|sigquit|abort|teardown|clean ?up|"
    r"Process [A-Za-z_]+[0-9_]*:$|Finished server process|Waiting for application shutdown"
)
# a request handler in a traceback: the request failed, the server that ran it lives on
_REQUEST_HANDLER = re.compile(r"/entrypoints/openai/serving_[a-z_]+\.py")

# role of a process by the name in its prefix (vLLM, Ray, Ray Serve, verl, sglang-in-Ray)
_ROLE_OF_NAME: tuple[tuple[str, str, str | None], ...] = (
    ("EngineCore", "engine_core", "vllm"), ("APIServer", "api_server", "vllm"), ("VllmWorker", "worker", "vllm"),
    ("Worker", "worker", "vllm"), ("RayWorkerWrapper", "worker", "vllm"), ("SGLang", "ray_actor", "sglang"),
    ("LLMRayActor", "ray_actor", "vllm"), ("ServeReplica", "serve_replica", None),
    ("ServeController", "serve_controller", None),
)


def role_of(key: str) -> tuple[str, str | None]:
    """(role, the stack its name implies) of a process key: 'Worker_TP1 pid=7' is a vLLM worker."""
    if key == "main":
        return "main", None
    if key.startswith("sglang"):
        return "scheduler" if key != "sglang" else "launcher", "sglang"
    if key.startswith("rank"):
        return "rank", None
    for prefix, role, stack in _ROLE_OF_NAME:
        if key.startswith(prefix):
            return role, stack
    return ("ray_actor" if "ip=" in key else "process"), None


@dataclass(slots=True)
class ExceptionRecord:
    """A process's exception: where it started, how, and how it ended."""

    line: int
    text: str
    how: str  # 'raised' (nobody logged it), 'logged' (at ERROR/CRITICAL), 'crash_dump' (faulthandler, backtrace)
    exception: str | None = None  # the exception line ('RuntimeError: NCCL error: ...'), when the log has it
    exception_line: int = 0
    last_line: int = 0
    request_handler: bool = False  # the traceback runs through a request handler


@dataclass(slots=True)
class Process:
    key: str
    role: str
    stack: set[str] = field(default_factory=set)
    first_line: int = 0
    last_line: int = 0
    last_text: str = ""
    lines: int = 0
    exception: ExceptionRecord | None = None
    alive_line: int | None = None  # the first line after ``exception`` that shows the process alive
    alive_why: str | None = None
    last_alive_line: int = 0  # its last line that is neither part of an exception nor teardown
    suspect: bool = False  # it wrote a fatal-looking line: whether it lives on will be asked
    previous_error: tuple[int, str] | None = None  # its last record, when logged at ERROR (a traceback may follow)

    @property
    def serving(self) -> bool:
        return bool(self.stack & SERVING_STACKS)

    @property
    def dead(self) -> bool:
        return self.exception is not None and self.alive_line is None and not self.exception.request_handler

    def why(self) -> str:
        """In words: why this process is dead or alive."""
        exc = self.exception
        if exc is None:
            return f"alive: its last record (line {self.last_line}) is no exception"
        ended = f", ending '{exc.exception}'" if exc.exception else ""
        what = {"raised": "an uncaught exception", "logged": "an exception logged at ERROR",
                "crash_dump": "a crash handler's dump"}[exc.how]
        if exc.request_handler:
            return f"alive: the exception at line {exc.line} runs through a request handler (a failed request){ended}"
        if self.alive_line is not None:
            return f"alive: {what} at line {exc.line}{ended}, then {self.alive_why} at line {self.alive_line}"
        return f"dead: its last record is {what} (line {exc.line}{ended}) and nothing after it shows it alive"


class ProcessTracker:
    """The processes of one file, fed line by line in file order (``note``), in bounded memory."""

    def __init__(self) -> None:
        self.processes: dict[str, Process] = {}
        self.overflowed = False
        self.last_served_line = 0

    def process(self, key: str) -> Process:
        found = self.processes.get(key)
        if found is not None:
            return found
        if len(self.processes) >= MAX_PROCESSES:
            self.overflowed = True
            quiet = min(self.processes.values(), key=lambda p: (p.exception is not None, p.last_line))
            del self.processes[quiet.key]
        role, stack = role_of(key)
        found = Process(key, role)
        if stack:
            found.stack.add(stack)
        self.processes[key] = found
        return found

    def note(self, key: str, line_no: int, level: str | None, message: str, stack: str | None = None) -> None:
        """A line of process ``key`` (at ``level``, None when its format has none); ``stack`` its format's framework."""
        proc = self.process(key)
        proc.lines += 1
        proc.first_line = proc.first_line or line_no
        proc.last_line = line_no
        if stack:
            proc.stack.add(stack)
        stripped = message.strip()
        if not stripped:
            return
        proc.last_text = stripped[:MAX_TEXT_CHARS]
        if level in QUIET_LEVELS and _TRACEBACK_HEADER not in message:
            self._alive(proc, line_no, stripped, level)
            return
        if self._exception_line(proc, line_no, level, message, stripped):
            return
        if level is None and stack is None and proc.previous_error is not None:
            return  # a bare line right after an ERROR record goes on with its message (a config dump), not a sign of life
        self._alive(proc, line_no, stripped, level)
        if level in ERROR_LEVELS:
            proc.previous_error = (line_no, stripped[:MAX_TEXT_CHARS])

    def _exception_line(self, proc: Process, line_no: int, level: str | None, message: str, stripped: str) -> bool:
        """Open, extend or close ``proc``'s exception with this line; False if the line is not part of one."""
        exc = proc.exception if proc.exception is not None and proc.alive_line is None else None
        frame = _PYTHON_FRAME.match(message)
        if frame is not None:
            if (found := _STACK_OF_PATH.search(frame.group(1))) is not None:
                proc.stack.add(found.group(1))
            crash = frame.group(2) == " in "  # faulthandler: 'line 171 in resolve_batch_result'
            if exc is None:
                exc = self._open(proc, line_no, stripped, "crash_dump" if crash else self._how(proc, level))
            exc.request_handler = exc.request_handler or bool(_REQUEST_HANDLER.search(frame.group(1)))
            exc.last_line = line_no
            return True
        if _TRACEBACK_HEADER in message:
            if level in QUIET_LEVELS:
                return False
            how = "logged" if not stripped.startswith(_TRACEBACK_HEADER) else self._how(proc, level)
            if exc is None or exc.exception is not None:  # a chained traceback goes on with the same exception
                self._open(proc, line_no, stripped, how)
            return True
        if _NATIVE_FRAME.match(message) or _GETTRACE_FRAME.match(message):
            if exc is None:  # the dump under an error record ('[E] Failed to initialize executor ...') is that error's
                exc = self._open(proc, line_no, stripped, "logged" if proc.previous_error else "crash_dump")
            if "tensorrt_llm" in message:
                proc.stack.add("tensorrt_llm")
            if exc.exception is None and _DEATH_FRAME.search(message):
                exc.exception, exc.exception_line = stripped[:MAX_TEXT_CHARS], line_no
            exc.last_line = line_no
            return True
        if exc is None:
            return False
        if _CHAINED.match(stripped):
            exc.last_line = line_no
            return True
        if _EXCEPTION_LINE.match(stripped) is not None and exc.exception is None:
            exc.exception = stripped[:MAX_TEXT_CHARS]
            exc.last_line = exc.exception_line = line_no
            return True
        if exc.exception is None and _CODE_LINE.match(message):  # a frame's source line, carets
            exc.last_line = line_no
            return True
        return False

    def continuation(self, key: str, line_no: int, text: str, severity: str) -> None:
        """A line that continues a record the parser holds open (the traceback under 'Scheduler hit an exception',
        a tactic's exception text): part of an exception when that record is an error, never a sign of life."""
        proc = self.process(key)
        proc.lines += 1
        proc.last_line = line_no
        if text.strip():
            proc.last_text = text.strip()[:MAX_TEXT_CHARS]
        if severity in ("error", "fatal") and text.strip():
            if not self._exception_line(proc, line_no, None, text, text.strip()) and proc.exception is not None:
                proc.exception.last_line = line_no

    def _how(self, proc: Process, level: str | None) -> str:
        return "logged" if level in ERROR_LEVELS or proc.previous_error is not None else "raised"

    def _open(self, proc: Process, line_no: int, text: str, how: str) -> ExceptionRecord:
        start = proc.previous_error if how == "logged" and proc.previous_error else (line_no, text[:MAX_TEXT_CHARS])
        proc.exception = ExceptionRecord(start[0], start[1], how, last_line=line_no)
        proc.alive_line = proc.alive_why = None
        proc.previous_error = None
        return proc.exception

    def _alive(self, proc: Process, line_no: int, text: str, level: str | None) -> None:
        """A line of ``proc`` that is not part of an exception: alive, unless it is teardown."""
        proc.previous_error = None
        if level in ERROR_LEVELS:  # an error after an error shows no health
            return
        if (proc.exception is not None or proc.suspect) and _TEARDOWN.search(text):  # nobody asks otherwise
            return
        proc.last_alive_line = line_no
        if proc.exception is None or proc.alive_line is not None:
            return
        proc.alive_line, proc.alive_why = line_no, f"its own {'record' if level is None else level + ' record'}"

    def suspect(self, key: str) -> None:
        """Process ``key`` wrote a fatal-looking line: from now on its teardown lines are told from signs of life."""
        self.process(key).suspect = True

    def served(self, line_no: int) -> None:
        """A request was served at ``line_no``: the server lived on past every exception before it."""
        self.last_served_line = line_no
        for proc in self.processes.values():
            if proc.exception is not None and proc.alive_line is None and proc.exception.line < line_no:
                proc.alive_line, proc.alive_why = line_no, "a request served"

    def dead(self) -> list[Process]:
        return [p for p in self.processes.values() if p.dead]

    def alive_after(self, key: str | None, line_no: int) -> tuple[int, str] | None:
        """Where process ``key`` (or the server, by a request served) shows itself alive after ``line_no``."""
        proc = self.processes.get(key or "main")
        if proc is not None and proc.last_alive_line > line_no:
            return proc.last_alive_line, f"{proc.key} logged on"
        if self.last_served_line > line_no:
            return self.last_served_line, "a request was served"
        return None
