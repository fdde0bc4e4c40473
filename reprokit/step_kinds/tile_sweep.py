"""``tile-sweep``: the MoE GEMM shapes timed on the GPU for each tile, against the roofline and the prediction."""

from __future__ import annotations

from typing import Any

import pydantic

from reprokit.report.charts import sweep_fraction_chart, sweep_roofline_chart
from reprokit.report.svg import esc, is_number
from reprokit.report.tables import figure, html_table
from reprokit.step_kinds.base import ReportStep, Result, Section, StepInput, StepKind


class SweepResult(Result):
    model: str | None = None
    model_config_: dict[str, Any] | None = pydantic.Field(None, alias="model_config")  # pydantic owns the name
    params: dict[str, Any] | None = None
    device: dict[str, Any] | None = None
    versions: dict[str, Any] | None = None
    problems: list[dict[str, Any]] | None = None
    roofline: dict[str, Any] | None = None
    backends: dict[str, Any] | None = None
    configs: list[dict[str, Any]] | None = None
    rows: list[dict[str, Any]] | None = None
    cross_check: dict[str, Any] | None = None
    best: list[dict[str, Any]] | None = None
    headline: dict[str, Any] | None = None
    notes: list[str] | None = None
    timing: dict[str, Any] | None = None


def html(step: ReportStep) -> list[str]:
    """The run's own ceilings, the roofline charts, the best tile of each problem."""
    result = step.result
    out = ['<h2 id="tile-sweep">Tile sweep: throughput against the roofline</h2>']
    roofline = result.get("roofline") or {}
    device = result.get("device") or {}
    ceilings = []
    if is_number(roofline.get("copy_gbps")):
        ceilings.append(f"copy {roofline['copy_gbps']:.0f} GB/s (read + write)")
    if is_number(roofline.get("read_gbps")):
        ceilings.append(f"read {roofline['read_gbps']:.0f} GB/s")
    if is_number(roofline.get("dense_gemm_tflops")):
        ceilings.append(f"dense bf16 GEMM {roofline['dense_gemm_tflops']:.0f} TFLOP/s")
    where = f" on {device.get('name')} ({device.get('gpu_arch')})" if device.get("name") else ""
    out.append(f'<p id="ceilings">Ceilings measured in this run{esc(where)}: {esc(", ".join(ceilings) or "none recorded")}.</p>')
    out += figure(sweep_roofline_chart(result),
                  "Best tile of each problem: achieved TFLOP/s against its arithmetic intensity (FLOP per byte of the "
                  "least traffic the problem needs), under the roof of the two ceilings above.")
    out += figure(sweep_fraction_chart(result),
                  "Fraction of the roofline (the slower of compute at the GEMM ceiling and traffic at copy bandwidth) "
                  "reached by the best tile of each problem.")
    rows = []
    for entry in result.get("best") or []:
        if not isinstance(entry, dict):
            continue
        time_s, fraction = entry.get("time_median_s"), entry.get("fraction_of_roofline")
        rows.append([entry.get("problem"), entry.get("phase"), (entry.get("config") or entry.get("reason"), "mono"),
                     (f"{time_s * 1e6:.1f}" if is_number(time_s) else "", "num"),
                     (f"{entry['tflops']:.1f}" if is_number(entry.get("tflops")) else "", "num"),
                     (f"{entry['gbps']:.0f}" if is_number(entry.get("gbps")) else "", "num"),
                     entry.get("bound"), (f"{fraction:.0%}" if is_number(fraction) else "", "num")])
    if rows:
        out += ["<h3>Best tile per problem</h3>", html_table(
            ["problem", "phase", "best config", "time (us)", "TFLOP/s", "GB/s", "bound", "of roofline"], rows, "best-tiles")]
    return out


KIND = StepKind(
    name="tile-sweep",
    where="host",
    order=30,
    module="reprokit.workloads.sweep",
    summary="runtime tile sweep of the MoE GEMM shapes on the GPU, cross-checked against the prediction",
    needs_gpu=True,
    needs_pins=("torch",),
    implemented=True,
    default_timeout_s=900,
    param_keys=("model", "parallelism", "tokens_per_expert", "backends", "time_budget_s", "tile_configs"),
    inputs=(StepInput("predicted", "the static prediction (static-smem's result.json)", from_step="static-smem",
                      optional=True),),
    model_config_param="model",
    result=SweepResult,
    sections=(Section("details", html=html),),
)
