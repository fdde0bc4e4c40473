"""The verdict's rules, in one ordered table, as PyTorch's CI log classifier orders its rules.

Each rule looks at the summary (the parser's events folded, and the process model of every file)
and either matches, at a line, or does not. Across rules the first that matches, in table order,
decides (priority); within a rule its last occurrence is the line it cites (the last death, the
last readiness line). The last rule, ``catch_all``, matches any log: what falls to it is a log the
table knows nothing of, and the share of a corpus that does is what the table does not know
(``benchmarks/triage_eval.py`` counts it).

A rule answers a question about the server, never "did a phrase match": FATAL is a serving
process that died (a line that only a dying process or its parent writes, with nothing after it
from that process showing it alive; or a serving process whose last record is an exception);
READY is a server shown up by its banner or by what it did (a request served 2xx, batches run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from reprokit.triage.patterns_stacks import UNCLAIMED
from reprokit.triage.processes import Process
from reprokit.triage.summary import CLAIMED_FORMATS, TriageSummary


class LogVerdict(Enum):
    """What a server log says, as a rule of the table decides it (the exit code of each: ``verdict.EXIT_CODES``)."""

    READY = "READY"
    READY_WITH_NONFATAL_AUTOTUNE_FAILURES = "READY_WITH_NONFATAL_AUTOTUNE_FAILURES"
    FATAL = "FATAL"
    NOT_READY = "NOT_READY"
    INCONCLUSIVE = "INCONCLUSIVE"


@dataclass(frozen=True)
class Hit:
    """Where a rule matched, and why, in words."""

    location: str | None  # file:line
    text: str | None
    why: str
    process: Process | None = None


@dataclass(frozen=True)
class Rule:
    name: str
    verdict: LogVerdict
    says: str  # what the rule means, for --explain and the docs
    match: Callable[[TriageSummary], Hit | None]


def _last_death(summary: TriageSummary, rule: str) -> Hit | None:
    found = [d for d in summary.deaths if d.rule == rule]
    if not found:
        return None
    death = found[-1]
    return Hit(death.location, death.text, death.why, death.process)


def _ready(summary: TriageSummary, how: str) -> Hit | None:
    seen = summary.readiness.by.get(how)
    if seen is None or summary.readiness.best()[0] != how:
        return None
    said = {"banner": "the framework's readiness line",
            "request_served": f"the server answered {seen.count} request(s) with 2xx",
            "traffic": f"the server ran requests ({seen.count} line(s) of batches, engine stats or requests received)",
            "routes": "the HTTP server listed its routes (vLLM does once its engine is up, as it starts serving)"}
    return Hit(seen.last, seen.last_text, said[how])


def _tactics_hidden(summary: TriageSummary) -> Hit | None:
    if not summary.ready or summary.failure_count:
        return None
    skipped = sum(summary.skipped_totals.values())
    if skipped:
        return Hit(summary.ready_location, summary.ready_text,
                   f"FlashInfer skipped {skipped} unsupported tactic(s) but the per-tactic lines are not in the log")
    if summary.autotune_ran and summary.flashinfer_logger_lines == 0:
        return Hit(summary.ready_location, summary.ready_text,
                   "autotuning ran, but the log has no FlashInfer logger line: failed tactics cannot be seen")
    return None


def _autotune_failures(summary: TriageSummary) -> Hit | None:
    if not summary.ready or not (summary.failure_count or summary.other_autotune.total):
        return None
    rows = summary.other_autotune.rows.values()
    last = max([r.span.first_location for r in summary.failures if r.span.first_location] +
               [r.last for r in rows] + [summary.oom_fallbacks.first_location] * bool(summary.oom_fallbacks.count),
               default=summary.ready_location,
               key=lambda where: int(where.rpartition(":")[2]) if where else 0)
    return Hit(last, None, f"{summary.failure_count} FlashInfer tactic failure(s) and {summary.other_autotune.total} "
                           "of other autotuners, all skipped: the server came up")


def _still_starting(summary: TriageSummary) -> Hit | None:
    if not summary.framework_seen or not summary.files:
        return None
    last = summary.files[-1]
    return Hit(f"{last.path}:{last.lines}", last.last_line,
               f"a server was starting (last phase: {summary.phase or 'starting'}) and the log ends with neither "
               "readiness nor a death")


def _unclaimed_stack(summary: TriageSummary) -> Hit | None:
    """Lines of a stack the triage recognises but does not read, and no line of one it reads: it cannot say."""
    seen = [name for kind, name in UNCLAIMED.items() if summary.events_by_kind[kind]]
    claimed = any(f.lines_by_format[name] for f in summary.files for name in CLAIMED_FORMATS) or any(
        p.serving for f in summary.files for p in f.processes.processes.values())
    if not seen or claimed:
        return None
    return Hit(None, None, f"{' and '.join(seen)}'s lines: this triage reads sglang, vLLM, TensorRT-LLM, Triton "
                          f"Inference Server and TGI, not {' or '.join(seen)}")


def _no_server(summary: TriageSummary) -> Hit | None:
    if summary.framework_seen or not summary.recognised:
        return None
    what = f"; {summary.other_autotune.total} autotune failure(s) of other tools" if summary.other_autotune.total else ""
    return Hit(None, None, f"lines the triage knows, but none of a serving framework{what}")


def _catch_all(summary: TriageSummary) -> Hit:
    return Hit(None, None, f"no rule knows any of the {summary.lines} line(s)")


RULES: tuple[Rule, ...] = (
    Rule("death_reported", LogVerdict.FATAL,
         "a line only a dying process or its parent writes (an uncaught exception, a signal, terminate, a child's "
         "failure, an NCCL watchdog, a sticky CUDA error), and nothing after it from that process shows it alive",
         lambda s: _last_death(s, "death_reported")),
    Rule("serving_process_died", LogVerdict.FATAL,
         "a process of sglang, vLLM or TensorRT-LLM whose last record is an exception (raised, logged at ERROR or "
         "CRITICAL, or a crash handler's dump), with nothing after it showing it alive",
         lambda s: _last_death(s, "serving_process_died")),
    Rule("ready_tactics_hidden", LogVerdict.INCONCLUSIVE,
         "the server came up and autotuned, but the log level hid the per-tactic lines", _tactics_hidden),
    Rule("ready_autotune_failures", LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES,
         "the server came up; some autotune tactics or choices failed and were skipped", _autotune_failures),
    Rule("ready_banner", LogVerdict.READY, "the framework's readiness line", lambda s: _ready(s, "banner")),
    Rule("ready_request_served", LogVerdict.READY, "a request answered with 2xx", lambda s: _ready(s, "request_served")),
    Rule("ready_traffic", LogVerdict.READY, "batches run, engine stats logged, requests received",
         lambda s: _ready(s, "traffic")),
    Rule("ready_routes", LogVerdict.READY, "the HTTP server's route listing, logged once the engine is up",
         lambda s: _ready(s, "routes")),
    Rule("unclaimed_stack", LogVerdict.INCONCLUSIVE, "lines of a stack the triage recognises but does not read (llama.cpp's "
         "server, Ollama, LMDeploy), and none of one it reads", _unclaimed_stack),
    Rule("still_starting", LogVerdict.NOT_READY, "a server's lines, and neither readiness nor a death: starting, hung or cut",
         _still_starting),
    Rule("no_server", LogVerdict.INCONCLUSIVE, "known lines, none of a serving framework", _no_server),
    Rule("catch_all", LogVerdict.INCONCLUSIVE, "nothing the table knows", _catch_all),
)


def first_match(summary: TriageSummary) -> tuple[Rule, Hit]:
    """The first rule of the table that matches (``catch_all`` always does)."""
    for rule in RULES:
        hit = rule.match(summary)
        if hit is not None:
            return rule, hit
    raise AssertionError("catch_all matches every log")
