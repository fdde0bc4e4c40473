"""Step results and run records for the report tests, from real data wherever it exists.

- static-smem, whole: fixtures/static-smem-0.6.3-sm120.result.json, the result.json that
  ``python -m reprokit.workloads.static_smem`` wrote for {"flashinfer": "0.6.3", "arch": "sm120"}
  on a CPU machine with nvcc 13.0 (48 rows; the per-row ``kernel`` records, the cache path and
  nvcc's path dropped);
- static-smem, small: rows built by the analysis' own ``build_rows`` from real probe output
  (tests/unit/smem/fixtures/kernels-0.6.3-sm120.json) and the tactic entries of
  reprokit/data/tactics/flashinfer-0.6.3.json, so a change of the row keys shows here; one
  entry with a dispatch error (synthetic: 0.6.3 has none) for the "unsupported" row;
- tile-sweep: the real H200 run, evidence/h200-tile-sweep-workload/result.json;
- triage: the real triage of tests/fixtures/logs/sglang-ep8-0.6.3-ready-autotune-failures.log.gz;
- telemetry: the serve workload's own sampler (``reprokit.workloads.serve.Telemetry``) reading the
  nvidia-smi test double of tests/doubles/sglang-server (8 GPUs, 235.5 W of 600 W); and a small
  synthetic list of samples for the edge cases.
"""

from __future__ import annotations

import json
import os
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from unittest.mock import patch

from reprokit.config.kit import load_kit_file
from reprokit.phases.conclude import conclude
from reprokit.records.atomic import write_json_atomic
from reprokit.records.models import StepEntry
from reprokit.records.run_dir import RunRecord
from reprokit.triage import triage_files
from reprokit.triage.reconcile import prediction_from_static_result
from reprokit.workloads.serve import Telemetry
from reprokit.workloads.static_smem.analysis import build_rows, failing_tactics, tile_verdicts

REPO = Path(__file__).resolve().parents[3]
REAL_SMEM = Path(__file__).parent / "fixtures" / "static-smem-0.6.3-sm120.result.json"
KERNELS = REPO / "tests" / "unit" / "smem" / "fixtures" / "kernels-0.6.3-sm120.json"
TACTICS = REPO / "reprokit" / "data" / "tactics" / "flashinfer-0.6.3.json"
SWEEP = REPO / "evidence" / "h200-tile-sweep-workload" / "result.json"
TRIAGE_LOG = REPO / "tests" / "fixtures" / "logs" / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz"
SM120_CAPACITY = 101376

# tactic -> the kernel record (variant key) it dispatches to, for the tactics the fixture has kernels of
KERNEL_OF_TACTIC = {3: "256x128x128-NONE-noswap-bf16", 15: "256x128x128-FINALIZE-noswap-bf16",
                    21: "128x128x128-FINALIZE-swap-bf16"}
UNSUPPORTED_ENTRY = {"op": "trtllm::fused_moe::gemm2", "tactic": 16, "tile": "128x128x512", "tile_enum": "CtaShape128x128x256B",
                     "fusion": "NONE", "swap_ab": True,
                     "dispatch_error": "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:502)"}


def smem_result() -> dict[str, Any]:
    """A static-smem result.json: 4 rows (3 sized: 98304, 102400 > 101376, 93184; 1 unsupported)."""
    kernels = json.loads(KERNELS.read_text())
    tactics = {t["tactic"]: t for t in json.loads(TACTICS.read_text())["tactics"]}
    entries = [tactics[t] for t in KERNEL_OF_TACTIC] + [UNSUPPORTED_ENTRY]
    rows = build_rows({"bf16": entries}, kernels, lambda e, o: KERNEL_OF_TACTIC[e["tactic"]], SM120_CAPACITY, None)
    return {"workload": "static-smem", "status": "ok", "flashinfer": "0.6.3", "arch": "sm120", "dtype": "nvfp4",
            "output_dtypes": ["bf16"], "capacity_bytes": SM120_CAPACITY,
            "capacity_symbol": "cutlass::arch::sm120_smem_capacity_bytes", "optin_limit_bytes": None,
            **tile_verdicts(rows), "failing_tactics": failing_tactics(rows), "rows": rows, "notes": []}


def real_smem_result() -> dict[str, Any]:
    """48 rows (24 tactics x bf16/f16); only gemm2 tactics 14 and 15 (FINALIZE, no swap_ab) exceed: 102400 B."""
    return json.loads(REAL_SMEM.read_text())


def sweep_result() -> dict[str, Any]:
    return json.loads(SWEEP.read_text())


def triage_result() -> dict[str, Any]:
    """As the kit's triage step writes it (reprokit/plan/triage_step.py)."""
    prediction = prediction_from_static_result(real_smem_result(), "steps/static-smem/result.json")
    report = triage_files([TRIAGE_LOG], flashinfer_version="0.6.3", predict=lambda version, arch: prediction)
    return {"workload": "triage", "schema_version": 1, "status": "ok", "logs": ["steps/serve/server.log.gz"], **report.to_json()}


def serve_telemetry(rounds: int = 3) -> dict[str, Any]:
    """What the serve step records: at least ``rounds`` samples of each of the double's 8 GPUs."""
    double = REPO / "tests" / "doubles" / "sglang-server"
    with patch.dict(os.environ, {"PATH": f"{double}{os.pathsep}{os.environ.get('PATH', '')}"}):
        sampler = Telemetry(interval_s=0.05)
    sampler.start()
    deadline = time.monotonic() + 60
    while len(sampler.samples) < 8 * rounds and time.monotonic() < deadline:
        time.sleep(0.02)
    sampler.stop_event.set()
    sampler.join(timeout=15)
    return sampler.summary()


# Synthetic benchmark figures (no real sglang run on SM120 exists here): flat from 8 to 32, as the investigation found.
BENCH_FIGURES = ((1, 4, 118.0, 41.0, 7.9, 1050.0), (8, 32, 1580.0, 63.0, 4.6, 1290.0), (32, 128, 1640.0, 210.0, 17.0, 4100.0))


def bench_rows(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Bench rows in the serve workload's format, their windows splitting the telemetry's time span in three."""
    times = sorted({s["t_s"] for s in samples})
    thirds = [times[i * len(times) // 3:(i + 1) * len(times) // 3] or times[-1:] for i in range(3)]
    return [{"concurrency": c, "exit_code": 0, "t_start_s": window[0], "t_end_s": window[-1], "completed": done,
             "request_throughput": done / 10, "output_throughput": tok_s, "median_ttft_ms": ttft, "median_itl_ms": itl,
             "median_e2e_latency_ms": e2e}
            for (c, done, tok_s, ttft, itl, e2e), window in zip(BENCH_FIGURES, thirds)]


def telemetry(gpus: int = 2, times_s: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 4.0)) -> list[dict[str, Any]]:
    return [{"t_s": t, "gpu": g, "power_w": 230.0 + 10 * g + t, "util_pct": 40.0 + 5 * t, "mem_used_mib": 70000 + 100 * g,
             "sm_clock_mhz": 1800 + 10 * g} for t in times_s for g in range(gpus)]


SM120_FINGERPRINT = {
    "schema_version": 1, "status": "ok",
    "host": {"hostname": "rtx-host", "kernel": "6.8.0", "machine": "x86_64", "python": "3.11.2", "in_container": True},
    "packages": {"torch": "2.9.1", "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3", "sglang": "0.5.9"},
    "nvcc": "12.9", "driver": {"driver_release": "580.95.05", "cuda_driver_api": "13.0"},
    "devices": [{"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0",
                 "gpu_arch": "sm120", "multiprocessor_count": 188, "max_shared_memory_per_block_bytes": 49152,
                 "max_shared_memory_per_multiprocessor_bytes": 102400, "max_shared_memory_per_block_optin_bytes": 101376}
                for i in range(8)],
    "gpu_status": "ok", "gpu_reason": None,
}

DEMO_KIT = """\
kit: report-demo
description: every step kind the report draws, with results from real runs and real logs
pins:
  cuda: "12.9.1"
  flashinfer-python: "0.6.3"
  torch: "2.9.1"
  sglang: "0.5.9"
steps:
  - {name: probe, uses: smem-probe}
  - {name: static-smem, uses: static-smem, with: {arch: sm120}}
  - {name: sweep, uses: tile-sweep}
  - {name: serve, uses: serve, with: {model: GLM-5-NVFP4}}
  - {name: triage, uses: triage, with: {logs_from: serve, flashinfer: "0.6.3"}}
expect:
  - {name: sm120-optin-limit, step: probe, path: "devices[*].driver.max_shared_memory_per_block_optin_bytes", equals: 101376}
  - {name: big-tiles-overflow, step: static-smem, path: failing_tiles, contains_all: ["128x256x128", "256x128x128"]}
  - {name: decode-meets-target, step: sweep, path: headline.decode_ep_meets_target, equals: true}
  - {name: ready-despite-failures, step: triage, path: verdict, equals: READY_WITH_NONFATAL_AUTOTUNE_FAILURES}
"""


def build_demo_record(tmp: Path, with_telemetry: bool = True) -> Path:
    """A complete run record finalised by the runner's own ``conclude`` (judge, report.md, report.html, hashes).

    The probe did not run (INCONCLUSIVE), the other three expectations hold: verdict INCONCLUSIVE.
    """
    kit_path = tmp / "report-demo.yml"
    kit_path.write_text(DEMO_KIT)
    kit = load_kit_file(kit_path)
    record = RunRecord.create(tmp / "runs", "20260219T100000Z-report-demo-rtx-0001",
                              kit={"name": kit.kit, "path": str(kit_path), "sha256": "0" * 64, "description": kit.description},
                              pins=dict(kit.pins), host={"name": "rtx-host", "connection": "ssh", "runtime": "docker"},
                              fingerprint=SM120_FINGERPRINT, pin_drift={}, verdict=None)
    serve_result = {"workload": "serve", "status": "ok", "ready": True, "outcome": "ready", "ready_after_s": 179.0}
    if with_telemetry:
        serve_result["telemetry"] = serve_telemetry()
        serve_result["bench"] = bench_rows(serve_result["telemetry"]["samples"])
    results = {"static-smem": ("static-smem", real_smem_result()), "sweep": ("tile-sweep", sweep_result()),
               "serve": ("serve", serve_result), "triage": ("triage", triage_result())}
    steps = {"probe": StepEntry("probe", "smem-probe", "not_run", reason="not run: skipped for this test")}
    for name, (uses, result) in results.items():
        out = record.step_dir(name)
        write_json_atomic(out / "result.json", result)
        (out / "step.log").write_text(f"{name} ran\n")
        steps[name] = StepEntry(name, uses, "ok", duration_s=1.5, exit_code=0, log=f"steps/{name}/step.log",
                                result_file=f"steps/{name}/result.json", result=result)
    for entry in steps.values():
        record.set_step(entry)
    conclude(kit, record, steps, record.manifest.fingerprint)
    return record.dir


class _Marks(HTMLParser):
    """Every element with its attributes and the id of the ``<svg>`` it is in."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], str | None]] = []
        self._svg: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if tag == "svg":
            self._svg.append(attributes.get("id"))
        self.elements.append((tag, attributes, self._svg[-1] if self._svg else None))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, self._svg[-1] if self._svg else None))

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self._svg:
            self._svg.pop()


def elements(html_text: str) -> list[tuple[str, dict[str, str], str | None]]:
    parser = _Marks()
    parser.feed(html_text)
    return parser.elements


def marks(html_text: str, svg_id: str, tag: str, *classes: str) -> list[dict[str, str]]:
    """Attributes of the ``tag`` elements inside ``<svg id=svg_id>`` that have all ``classes``."""
    return [attrs for t, attrs, svg in elements(html_text)
            if svg == svg_id and t == tag and set(classes) <= set(attrs.get("class", "").split())]


def table_rows(html_text: str, table_id: str) -> int:
    """Body rows of ``<table id=table_id>``."""
    count, inside, in_body = 0, False, False
    for tag, attrs, _ in elements(html_text):
        if tag == "table":
            inside = attrs.get("id") == table_id
            in_body = False
        elif inside and tag == "tbody":
            in_body = True
        elif inside and in_body and tag == "tr":
            count += 1
    return count
