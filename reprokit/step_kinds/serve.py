"""``serve``: the sglang server launched with the kit's flags, watched until ready, fatal or timeout.

Its section (``reprokit/report/kind_sections/serve.py``): time to ready, the warmup phases, throughput and latency per
concurrency, the GPUs' power against their limit, and findings that say what those numbers mean, with their
evidence. Every figure comes from the step's ``result.json`` (``performance``, written by the workload with
``reprokit.workloads.serve_stats``; recomputed the same way for records older than that field) and the triage's
warmup timeline.
"""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.step_kinds.base import (
    HostPath,
    Number,
    Output,
    Part,
    Result,
    StepKind,
)
from reprokit.workloads.facts.serve_params import SGLANG_DEFAULTS
from reprokit.workloads.serve_stats import findings, performance


class BenchRow(Part):
    """One benchmark at one concurrency, with its window on the telemetry's clock."""

    concurrency: int | None = None
    t_start_s: Number | None = None
    t_end_s: Number | None = None


class Sample(Part):
    """One telemetry sample of one GPU (``TELEMETRY_METRICS`` are read by name)."""

    gpu: int | str | None = None
    t_s: Number | None = None
    power_w: Number | None = None
    util_pct: Number | None = None
    mem_used_mib: Number | None = None
    sm_clock_mhz: Number | None = None
    power_limit_w: Number | None = None


class GpuTelemetry(Part):
    gpu: int | str | None = None
    samples: int | None = None
    max_power_w: Number | None = None
    power_limit_w: Number | None = None
    mean_util_pct: Number | None = None


class Telemetry(Part):
    samples: list[Sample] | None = None
    per_gpu: list[GpuTelemetry] | None = None
    error: str | None = None


class PerformanceRow(Part):
    """The figures at one concurrency (``reprokit/workloads/serve_stats.py`` computes them)."""

    concurrency: int | None = None
    completed: int | None = None
    output_throughput_tok_s: Number | None = None
    median_ttft_ms: Number | None = None
    median_itl_ms: Number | None = None
    median_e2e_latency_ms: Number | None = None
    power_median_w: Number | None = None
    power_limit_w: Number | None = None
    util_median_pct: Number | None = None
    sm_clock_median_mhz: Number | None = None
    window: str | None = None


class Performance(Part):
    ready_after_s: Number | None = None
    by_concurrency: dict[str, PerformanceRow] | None = None


class Answers(Part):
    """Greedy answers to prompts with known answers (``reprokit/workloads/answers.py``)."""

    checked: bool | None = None
    skipped: str | None = None
    right: int | None = None
    total: int | None = None
    first_wrong: str | None = None


class ServeResult(Result):
    command: list[str] | None = None
    env: list[str] | None = None
    outcome: str | None = None
    ready: bool | None = None
    ready_after_s: float | None = None
    waited_s: float | None = None
    server_exit_code_before_stop: int | None = None
    server_exit_code: int | None = None
    stopped_by_reprokit: bool | None = None  # alive until the step stopped it (SIGTERM): not a death
    stop_s: float | None = None  # from the SIGTERM until every process of the server was gone
    smoke: dict[str, Any] | None = None
    answers: Answers | None = None
    bench: list[BenchRow] | None = None
    telemetry: Telemetry | None = None
    performance: Performance | None = None
    duration_s: float | None = None
    server_log: str | None = None
    fatal_line: dict[str, Any] | None = None
    crash_dump: dict[str, Any] | None = None  # the first crash handler's dump in server.log: file, line, lines

    @pydantic.field_validator("telemetry", mode="before")
    @classmethod
    def _samples_alone(cls, value: Any) -> Any:
        return {"samples": value} if isinstance(value, list) else value  # older records: a bare list of samples


def _dicts(parts: list[Any] | None) -> list[dict[str, Any]]:
    """Parts as the workload wrote them, for ``serve_stats`` (workload code, which reads dicts)."""
    return [part.model_dump(exclude_unset=True) for part in parts or []]


def typed_performance(result: ServeResult | None) -> Performance | None:
    """The result's ``performance``, or the same figures computed from its bench rows and telemetry."""
    if result is None or not (result.bench or result.performance):
        return None
    if result.performance is not None:
        return result.performance
    samples = result.telemetry.samples if result.telemetry else None
    return Performance.model_validate(performance(_dicts(result.bench), _dicts(samples), result.ready_after_s))


def serve_findings(result: ServeResult | None) -> list[str]:
    """What the result's figures mean, in words, as the workload's ``serve_stats`` says them."""
    perf = typed_performance(result)
    return [f["text"] for f in findings(perf.model_dump(exclude_unset=True))] if perf else []


KIND = StepKind(
    name="serve",
    where="host",
    order=60,
    module="reprokit.workloads.serve",
    summary="sglang server launched with the kit's flags, watched until ready, fatal or timeout",
    needs_gpu=True,
    needs_pins=("sglang", "flashinfer-python", "torch"),
    implemented=True,
    default_timeout_s=3600,
    param_keys=(
        "model", "tp", "ep", "moe_runner_backend", "quantization", "mem_fraction_static",
        "max_running_requests", "load_format", "env", "extra_args", "ready_timeout_s", "port", "bench",
        "smoke_prompt", "telemetry_interval_s",
    ),
    host_paths=(HostPath("model", variable="models_dir"),),
    required_params=(("model", "a model path on the host, in its models_dir, or a hub id"),),
    param_defaults=tuple(SGLANG_DEFAULTS.items()),
    outputs=(Output("result.json", "outcome, readiness, answers, benchmark rows, telemetry and performance"),
             Output("**/*.log", "the server's log (server.log), the benchmarks' (bench-c<N>.log), the answers"
                    " (answers.log)"),
             Output("**/*.log.gz", "a server log the host compressed")),
    result=ServeResult,
)
