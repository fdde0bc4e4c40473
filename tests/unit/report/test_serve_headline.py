"""The serve section's figures and findings, ReFrame-style references, the byte headline, reasons said once."""

from __future__ import annotations

import re

import pytest

from reprokit.config.kit import Expectation
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Judgement, StepEntry
from reprokit.report.judge import judge_one
from reprokit.report.kind_sections import serve as serve_sections
from reprokit.report.kind_sections import static_smem
from reprokit.report.kind_sections.base import ReportStep
from reprokit.report.markdown import shorten
from reprokit.report.reasons import shared_reasons
from reprokit.step_kinds import STEP_KINDS, serve
from reprokit.workloads.serve_stats import findings, performance
from tests.unit.report.report_data import BENCH_FIGURES, real_smem_result, triage_result


def typed(kind: str, result: dict):
    """``result`` as the report reads it: the kind's model."""
    return STEP_KINDS[kind].read_result(result, f"a {kind} result")


def served(result: dict) -> StepEntry:
    return StepEntry("serve", "serve", "ok", result=result)


SM120 = Fingerprint.from_json({"devices": [{"gpu_arch": "sm120", "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}]}, "test")


def double_samples(times_s=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0)):
    """What the nvidia-smi test double prints, sampled at ``times_s``: 8 GPUs at 235.5 W of 600 W."""
    return [{"t_s": t, "gpu": g, "power_w": 235.5, "power_limit_w": 600.0, "util_pct": 41.0, "mem_used_mib": 81234.0,
             "sm_clock_mhz": 2610.0} for t in times_s for g in range(8)]


def bench(windows=((0.0, 1.5), (1.5, 3.5), (3.5, 5.0))):
    return [{"concurrency": c, "completed": n, "output_throughput": tok, "median_ttft_ms": ttft, "median_itl_ms": itl,
             "median_e2e_latency_ms": e2e, "t_start_s": w[0], "t_end_s": w[1]}
            for (c, n, tok, ttft, itl, e2e), w in zip(BENCH_FIGURES, windows)]


def test_performance_takes_each_benchmarks_window_of_samples():
    perf = performance(bench(), double_samples(), 179.0)
    assert perf["ready_after_s"] == 179.0
    assert list(perf["by_concurrency"]) == ["c1", "c8", "c32"]
    c8 = perf["by_concurrency"]["c8"]
    assert (c8["samples"], c8["gpus"], c8["power_median_w"], c8["power_limit_w"]) == (16, 8, 235.5, 600.0)
    assert c8["power_median_fraction_of_limit"] == 0.393
    assert c8["window"] == "benchmark 1.5-3.5 s"


def test_a_window_shorter_than_the_sampling_interval_takes_the_nearest_round():
    perf = performance(bench(windows=((0.1, 0.2), (1.2, 1.3), (2.6, 2.7))), double_samples())
    assert perf["by_concurrency"]["c32"]["samples"] == 8
    assert perf["by_concurrency"]["c32"]["window"] == "nearest sample at 3 s (benchmark 2.6-2.7 s)"


def test_findings_say_underfed_and_flat_with_their_evidence():
    texts = [f["text"] for f in findings(performance(bench(), double_samples()))]
    assert texts == [
        "GPUs underfed: median 235.5 W of 600 W at concurrency 32 (39% of the limit; utilisation 41.0 %, 8 GPU(s), "
        "16 samples, benchmark 3.5-5 s)",
        "throughput flat from concurrency 8 to 32: 1580 -> 1640 tok/s (x1.04 for x4 the concurrency)",
    ]


def test_busy_gpus_and_scaling_throughput_give_no_finding():
    busy = [dict(s, power_w=570.0) for s in double_samples()]
    scaling = [dict(row, output_throughput=row["output_throughput"] * row["concurrency"]) for row in bench()]
    assert findings(performance(scaling, busy)) == []


def test_a_record_without_performance_is_computed_the_same_way():
    result = {"status": "ok", "bench": bench(), "telemetry": {"samples": double_samples()}, "ready_after_s": 12.0}
    perf = serve.typed_performance(typed("serve", result))
    assert perf.model_dump(exclude_unset=True) == performance(bench(), double_samples(), 12.0)
    assert perf.by_concurrency["c32"].power_median_w == 235.5


def test_warmup_phases_from_the_real_ep8_log():
    phases = serve_sections.warmup_phases(typed("triage", triage_result()))
    assert [(p.phase, p.duration_s) for p in phases] == [
        ("autotuning (FlashInfer MoE)", 50.0), ("CUDA graph capture", 99.0), ("ready", 8.0)]


@pytest.mark.parametrize(("observed", "status", "reason"), [
    (235.5, "PASS", ""),
    (190.0, "PASS", ""),
    (180.0, "FAIL", "180 W is -23.4% from the reference 235 W"),
    (290.0, "FAIL", "290 W is +23.4% from the reference 235 W"),
    ("235", "FAIL", "235 is not a number"),
])
def test_reference_with_tolerances(observed, status, reason):
    exp = Expectation.model_validate({"name": "gpu-power-at-c32", "step": "serve", "path": "performance.c32.power_median_w",
                                      "reference": {"value": 235, "lower": -0.2, "upper": 0.2, "unit": "W"}})
    judged = judge_one(exp, served({"status": "ok", "performance": {"c32": {"power_median_w": observed}}}), SM120)
    assert (judged.status, judged.reason, judged.expected) == (status, reason, "reference 235 W (-20% / +20%)")


def test_reference_with_only_a_floor():
    exp = Expectation.model_validate({"name": "tok", "step": "serve", "path": "t", "reference": {"value": 1640, "lower": -0.1}})
    assert judge_one(exp, served({"status": "ok", "t": 99999}), SM120).status == "PASS"
    assert judge_one(exp, served({"status": "ok", "t": 1400}), SM120).status == "FAIL"
    assert judge_one(exp, served({"status": "ok", "t": 1400}), SM120).expected == "reference 1640 (-10% / unbounded)"


def test_byte_accounting_of_the_real_sm120_analysis():
    # the record predates static_smem_bytes: the static column says so rather than print a 0 nobody measured
    assert static_smem.accounting_rows(typed("static-smem", real_smem_result())) == [
        ["gemm2 #14 128x256x128 FINALIZE bf16,f16", "102 400", "not measured", "101 376", "+1 024", "83 968", "17 408"],
        ["gemm2 #15 256x128x128 FINALIZE bf16,f16", "102 400", "not measured", "101 376", "+1 024", "83 968", "17 408"]]
    rows = real_smem_result()["rows"]
    for row in rows:
        row.update(static_smem_bytes=0, total_smem_bytes=row.get("kernel_smem_bytes"))
    result = {**real_smem_result(), "rows": rows,
              "sources": {**real_smem_result()["sources"], "static_smem_limits": {"sm_120a": 101376}}}
    assert static_smem.accounting_rows(typed("static-smem", result))[0][1:5] == ["102 400", "0", "101 376", "+1 024"]
    assert static_smem.static_limit_line(typed("static-smem", result)) == (
        "Compiled for sm_120a; the compiler's limit on static __shared__ there is sm_120a: 101 376 B (the launch limit "
        "above counts static and dynamic bytes together).")
    chart = static_smem.text_chart(typed("static-smem", real_smem_result()))
    assert chart[0] == chart[-1] == "```"
    bars = chart[2:-1]
    assert len(bars) == 6  # 2 over, the 4 fitting ones nearest the limit
    # drawn against the limit: 1024 B over is a third of the 3072 B under, not a sliver of 100 KiB
    assert [max(len(run) for run in re.findall("#+", line)) for line in bars] == [8, 8, 24, 24, 24, 24]
    assert bars[0].endswith("+1 024 B OVER") and bars[2].endswith("-3 072 B")


def test_a_result_without_kernels_says_why():
    result = {"status": "ok", "flashinfer": "0.6.3", "arch": "sm90", "dtype": "nvfp4", "rows": [], "failing_tiles": [], "fitting_tiles": [],
              "notes": ["FlashInfer 0.6.3 builds no NVFP4 CUTLASS MoE kernels for sm90"]}
    lines = static_smem.headline_markdown(ReportStep("static-smem", typed("static-smem", result)))
    assert lines == ["", "## Shared memory on sm90", "",
                     "FlashInfer 0.6.3 has no nvfp4 CUTLASS MoE kernel for sm90 that the analysis could size: "
                     "FlashInfer 0.6.3 builds no NVFP4 CUTLASS MoE kernels for sm90"]
    assert "none" not in " ".join(lines)


NO_GPU = "no NVIDIA driver on this host (libcuda.so.1 not found); install the driver, or run on a GPU host"


def no_gpu_run():
    """Judged as on a machine without a GPU: 8 expectations, 6 of them through the same missing driver."""
    steps = {
        "probe": StepEntry("probe", "smem-probe", "not_run", reason=f"not run: needs a CUDA GPU; {NO_GPU}"),
        "sweep": StepEntry("sweep", "tile-sweep", "not_run", reason=f"not run: needs a CUDA GPU; {NO_GPU}"),
        "serve": StepEntry("serve", "serve", "missing_dependency", reason="sglang is not installed for /usr/bin/python3"),
        "triage": StepEntry("triage", "triage", "not_run",
                            reason="not run: 'serve' did not serve (missing_dependency: sglang is not installed for /usr/bin/python3)"),
    }
    gated = f"applies to sm120/sm121; this host has no GPU ({NO_GPU})"
    expectations = [
        {"name": "sm120-optin-limit", "reason": gated},
        {"name": "boundary-launch", "reason": f"step 'probe' has no result: not run: needs a CUDA GPU; {NO_GPU}"},
        {"name": "sweep-fits", "reason": f"step 'sweep' has no result: not run: needs a CUDA GPU; {NO_GPU}"},
        {"name": "server-came-up", "reason": "step 'serve' reported missing_dependency: sglang is not installed for /usr/bin/python3"},
        {"name": "smoke", "reason": "step 'serve' reported missing_dependency: sglang is not installed for /usr/bin/python3"},
        {"name": "autotuning-ran", "reason": f"step 'triage' has no result: {steps['triage'].reason}"},
        {"name": "ready-despite-failures", "reason": gated},
        {"name": "big-tiles", "reason": gated},
    ]
    judged = [Judgement(e["name"], "-", "INCONCLUSIVE", "", None, e["reason"]) for e in expectations]
    return judged, Fingerprint.from_json({"gpu_reason": NO_GPU, "devices": []}, "test"), steps


def test_a_reason_shared_by_many_expectations_is_said_once():
    expectations, fingerprint, steps = no_gpu_run()
    notes, cells = shared_reasons(expectations, fingerprint, steps)
    assert [n.sentence() for n in notes] == [
        "step 'serve' (missing_dependency): 3 expectations depend on it: sglang is not installed for /usr/bin/python3",
        f"no GPU here: 5 expectations need one: {NO_GPU}",
    ]
    text = " ".join(cells.values())
    assert text.count("no NVIDIA driver") == 0 and text.count("sglang is not installed") == 0
    assert cells["sm120-optin-limit"] == "applies to sm120/sm121; this host has no GPU (note 2)"
    assert cells["autotuning-ran"] == "step 'triage' has no result: not run: 'serve' did not serve (missing_dependency: note 1)"


def test_shorten_never_cuts_inside_a_word():
    text = "['128x256x128', '256x128x128', '128x128x128', '128x128x256']"
    assert shorten(text, 40) == "['128x256x128', '256x128x128' …"
    assert shorten("short", 40) == "short"


def test_the_console_says_why_an_arch_has_no_kernels_instead_of_an_empty_table():
    import io

    from rich.console import Console

    from reprokit.report.smem_table import print_smem_result

    out = io.StringIO()
    result = {"status": "ok", "flashinfer": "0.6.3", "arch": "sm90", "dtype": "nvfp4", "capacity_bytes": 232448, "rows": [],
              "failing_tiles": [], "fitting_tiles": [], "notes": []}
    print_smem_result(result, Console(file=out, width=300))
    assert out.getvalue() == ("FlashInfer 0.6.3 has no nvfp4 CUTLASS MoE kernel for sm90 that the analysis could size, so no "
                              "tile can fit or fail there: the tactic list of that arch is empty or not dispatchable (see the "
                              "step log).\n")
