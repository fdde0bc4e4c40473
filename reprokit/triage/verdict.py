"""The verdict on a server log, and the exit code of each verdict (one table, here).

The codes start at 10 so that they never collide with the generic exit codes of
``reprokit.errors.ExitCode`` (0-5, 130): a wrapper can tell "the log says FATAL" (11)
from "the triage could not run" (2). READY is 0 so that a shell ``&&`` reads naturally.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from reprokit.triage.processes import Process
from reprokit.triage.rules import LogVerdict, first_match
from reprokit.triage.summary import TriageSummary

LOG_LEVEL_ENV = "FLASHINFER_LOGGING_LEVEL"
DEBUG_TACTIC_LINES_SINCE = Version("0.6.8")  # 'Skipping tactic' moved from WARNING to DEBUG


EXIT_CODES: dict[LogVerdict, int] = {
    LogVerdict.READY: 0,  # the server came up; no autotune tactic failed
    LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES: 10,  # up, and some tactics failed while autotuning (skipped)
    LogVerdict.FATAL: 11,  # a fatal error: a process died, warmup failed, a sticky CUDA error, an NCCL timeout
    LogVerdict.NOT_READY: 12,  # the log ends with neither readiness nor a fatal error: still starting, hung or cut
    LogVerdict.INCONCLUSIVE: 13,  # the log cannot say: tactic lines hidden by the log level, or nothing recognisable
}


@dataclass(frozen=True)
class DecidedBy:
    """The rule of ``rules.RULES`` that decided, the line it last matched, and why, in words."""

    rule: str
    location: str | None
    text: str | None
    why: str
    process: Process | None = None


@dataclass(frozen=True)
class Decision:
    verdict: LogVerdict
    reason: str
    hint: str | None = None  # what to change to get a conclusive log, in words
    env: dict[str, str] | None = None  # the same as environment variables for the next run
    evidence: str | None = None  # file:line of the line the verdict rests on
    decided_by: DecidedBy | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def _hidden_tactics_hint(flashinfer_version: str | None) -> str:
    try:
        old = flashinfer_version is not None and Version(flashinfer_version) < DEBUG_TACTIC_LINES_SINCE
    except InvalidVersion:
        old = False
    if old:
        return (f"set {LOG_LEVEL_ENV}=debug (FlashInfer {flashinfer_version} logs each failed tactic at WARNING: "
                "any level up to warning shows them) and keep the server's stderr in the log")
    return (f"set {LOG_LEVEL_ENV}=debug (FlashInfer >= {DEBUG_TACTIC_LINES_SINCE} logs each failed tactic at DEBUG) "
            "and keep the server's stderr in the log")


def tactic_lines_visible(summary: TriageSummary, flashinfer_version: str | None) -> bool:
    """Whether the log would show a tactic the autotuner tried: no autotuning at all, DEBUG lines of FlashInfer's
    logger (its 'profiling' and, from 0.6.8, its 'Skipping tactic' lines), or any of its lines before 0.6.8 (failed
    tactics at WARNING)."""
    if not summary.autotune_ran or summary.flashinfer_levels.get("DEBUG") or summary.profiled_tactics:
        return True
    try:
        old = flashinfer_version is not None and Version(flashinfer_version) < DEBUG_TACTIC_LINES_SINCE
    except InvalidVersion:
        old = False
    return old and summary.flashinfer_logger_lines > 0


def decide(summary: TriageSummary, flashinfer_version: str | None) -> Decision:
    """The first rule of the table that matches decides (``rules.RULES``: deaths, then readiness, then the rest)."""
    rule, hit = first_match(summary)
    decision = _explained(rule.verdict, summary, flashinfer_version)
    reason = hit.why if rule.name == "unclaimed_stack" else decision.reason  # names the stack it saw
    return Decision(decision.verdict, reason, decision.hint, decision.env, decision.evidence,
                    DecidedBy(rule.name, hit.location, hit.text, hit.why, hit.process))


def _explained(verdict: LogVerdict, summary: TriageSummary, flashinfer_version: str | None) -> Decision:
    """The reason, hint and evidence of ``verdict``, in words."""
    fatal = summary.fatal
    if verdict is LogVerdict.FATAL and fatal is not None:
        cause = f" ({fatal.cause})" if fatal.cause else ""
        where = f" on {fatal.rank}" if fatal.rank else ""
        what = fatal.exception or fatal.message
        return Decision(LogVerdict.FATAL, f"{fatal.family}{cause}{where} at {fatal.location}: {what}",
                        evidence=fatal.location)
    if verdict in (LogVerdict.READY, LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES) or (
            verdict is LogVerdict.INCONCLUSIVE and summary.ready):
        return _ready(summary, flashinfer_version)
    if verdict is LogVerdict.INCONCLUSIVE:
        return Decision(
            LogVerdict.INCONCLUSIVE,
            f"no line of a serving framework in {summary.lines} line(s) (sglang, vLLM, TensorRT-LLM, FlashInfer): "
            "nothing says whether a server started",
        )
    last = summary.files[-1]
    cut = [f.path for f in summary.files if f.read.ends_mid_line or f.read.read_error]
    ending = f"; cut off: {', '.join(cut)}" if cut else ""
    return Decision(
        LogVerdict.NOT_READY,
        f"the log ends with neither readiness nor a fatal error (last phase: {summary.phase or 'starting'}; still "
        f"starting, hung or truncated){ending}",
        evidence=f"{last.path}:{last.lines}",
    )


def _ready(summary: TriageSummary, flashinfer_version: str | None) -> Decision:
    """The server came up: were autotune failures seen, or hidden by the log level?"""
    evidence = summary.ready_location
    failures = summary.failure_count
    others = summary.other_autotune.total
    if others and not failures:
        return Decision(LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES,
                        f"server ready; {others} autotune failure(s) of other autotuners (Inductor, TensorRT), skipped",
                        evidence=evidence)
    if failures:
        tiles = ", ".join(summary.failure_tiles) or "tiles unknown"
        oom = summary.oom_fallbacks.count
        fallbacks = f"; {oom} of them out of memory, fallen back to the default tactic" if oom else ""
        return Decision(
            LogVerdict.READY_WITH_NONFATAL_AUTOTUNE_FAILURES,
            f"server ready; {failures} autotune tactic failure(s), skipped by the autotuner ({tiles}){fallbacks}",
            evidence=evidence,
        )
    skipped = sum(summary.skipped_totals.values())
    if skipped:
        return Decision(
            LogVerdict.INCONCLUSIVE,
            f"server ready; FlashInfer skipped {skipped} unsupported tactic(s) but the per-tactic lines "
            "are not in the log, so the failing tiles are unknown",
            _hidden_tactics_hint(flashinfer_version),
            {LOG_LEVEL_ENV: "debug"},
            evidence=evidence,
        )
    if summary.autotune_ran and summary.flashinfer_logger_lines == 0:
        return Decision(
            LogVerdict.INCONCLUSIVE,
            "server ready and autotuning ran, but the log has no FlashInfer logger line, "
            "so failed tactics cannot be seen",
            _hidden_tactics_hint(flashinfer_version),
            {LOG_LEVEL_ENV: "debug"},
            evidence=evidence,
        )
    return Decision(LogVerdict.READY, "server ready; no autotune tactic failed", evidence=evidence)
