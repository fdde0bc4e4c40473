"""How far a server's start has got, as its log shows it: the phases, and the lines that mark them.

The triage names the phase of a whole log (``TriageReport.phase``); a workload that watches a live server log
(serve) reads the same marks here without importing the triage. Each mark is an ``errors.ErrorMessage``-shaped
regex in the ``re`` / ``grep -E`` subset with a real line as its example (sglang and FlashInfer, UPSTREAM.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.workloads.facts.upstream_errors import STICKY_CUDA_ERRORS

# In the order a start goes through them; 'dead' is any fatal line, whenever it comes.
STARTING = "starting"
LOADING_WEIGHTS = "loading_weights"
AUTOTUNE = "autotune"
CUDA_GRAPH_CAPTURE = "cuda_graph_capture"
ENGINE_INITIALIZED = "engine_initialized"
HTTP_SERVER_UP = "http_server_up"
READY = "ready"
DEAD = "dead"
PHASES = (STARTING, LOADING_WEIGHTS, AUTOTUNE, CUDA_GRAPH_CAPTURE, ENGINE_INITIALIZED, HTTP_SERVER_UP, READY, DEAD)
# What a person reads for each phase (the serve wait's progress lines).
LABELS = {STARTING: "starting", LOADING_WEIGHTS: "loading weights", AUTOTUNE: "autotuning",
          CUDA_GRAPH_CAPTURE: "capturing CUDA graphs", ENGINE_INITIALIZED: "engine initialized",
          HTTP_SERVER_UP: "HTTP server up", READY: "ready", DEAD: "dead"}


@dataclass(frozen=True)
class PhaseMark:
    phase: str
    regex: str
    example: str


MARKS = (
    PhaseMark(LOADING_WEIGHTS, r"Load weight (begin|end)\.",
              "[2025-02-22 08:19:45 TP26] Load weight begin. avail mem=78.38 GB"),
    PhaseMark(AUTOTUNE, r"\[AutoTuner\]: Tuning ([^ ]+): +(([0-9]+)%[|][^|]*[|] *)?([0-9]+)/([0-9]+)",
              "[AutoTuner]: Tuning trtllm::fused_moe::gemm1:  17%|█▋        | 1/6 [00:00<00:01,  3.76profile/s]"),
    PhaseMark(AUTOTUNE, r"Running FlashInfer autotune|\[Autotuner\]: Autotuning process starts",
              "[2026-02-19 10:05:12 TP0 EP0] Running FlashInfer autotune..."),
    PhaseMark(CUDA_GRAPH_CAPTURE, r"Capture [A-Za-z ]*(cuda|CUDA) graph begin",
              "[2026-02-19 10:11:02 TP0] Capture cuda graph begin. This can take up to several minutes."),
    PhaseMark(READY, r"The server is fired up and ready to roll!",
              "[2026-02-19 10:12:31] The server is fired up and ready to roll!"),
    PhaseMark(DEAD, r"Initialization failed\. warmup error|[A-Za-z_]+ hit an exception|"
              r"Received sigquit from a child process|CUDA error: [a-z ]*(" + "|".join(
                  s for s in STICKY_CUDA_ERRORS if " " in s) + ")",
              "[2026-02-19 10:08:44 TP3 EP3] Scheduler hit an exception: Traceback (most recent call last):"),
)
_COMPILED = tuple((mark, re.compile(mark.regex)) for mark in MARKS)


@dataclass(frozen=True)
class PhaseLine:
    """What one log line says about the start: its phase, and for autotuning which op and how far (done of total)."""

    phase: str
    line: str
    done: int | None = None
    total: int | None = None
    op: str | None = None


def phase_of_line(line: str) -> PhaseLine | None:
    """The phase a line marks, or None; the first fatal line of a log is the one to quote."""
    for mark, regex in _COMPILED:
        match = regex.search(line)
        if match is None:
            continue
        if mark.phase == AUTOTUNE and match.re.groups == 5:
            return PhaseLine(AUTOTUNE, line.rstrip("\n"), int(match.group(4)), int(match.group(5)), match.group(1))
        return PhaseLine(mark.phase, line.rstrip("\n"))
    return None
