"""report.html from real step results: sections, exact counts of chart marks, escaping, self-containment."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest

from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Artifact, Judgement, KitRef, Manifest, Owner, StepEntry, Verdict
from reprokit.records.run_dir import verify_record
from reprokit.report.html import render_html, write_html_report
from tests.unit.report.report_data import (
    SM120_FINGERPRINT,
    build_demo_record,
    elements,
    marks,
    smem_result,
    sweep_result,
    table_rows,
    telemetry,
    triage_result,
)

MANIFEST = Manifest(schema_version=1, run_id="r1", status="complete", started="2026-02-19T10:00:00Z",
                    owner=Owner(1, "control"), reprokit={"version": "0.1.0"}, kit=KitRef("ep8-crash"),
                    host={"name": "rtx-host", "connection": "ssh", "runtime": "docker"}, pins={"flashinfer-python": "0.6.3"},
                    fingerprint=Fingerprint.from_json(SM120_FINGERPRINT, "test"))
VERDICT = Verdict("FAIL", "1 of 1 expectations did not hold",
                  [Judgement("big-tiles-overflow-sm120", "static-smem", "FAIL", "contains_all ['128x256x128']", ["256x128x128"],
                             "missing")])


def steps_with(**results: tuple[str, dict | None]) -> dict:
    """Ok steps with these results (a result without a status says ``ok``, as its step's entry does)."""
    return {name: StepEntry(name, uses, "ok", result=None if result is None else {"status": "ok", **result})
            for name, (uses, result) in results.items()}


def render(steps: dict, manifest: Manifest | None = None, verdict: dict | None = None, artifacts: dict | None = None) -> str:
    return render_html(manifest or MANIFEST, verdict or VERDICT, steps, artifacts or {})


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return build_demo_record(tmp_path_factory.mktemp("demo"))


def test_the_runner_writes_report_html_and_lists_it_in_the_manifest(demo: Path) -> None:
    manifest = json.loads((demo / "manifest.json").read_text())
    assert "report.html" in manifest["artifacts"]
    assert verify_record(demo) == []
    page = (demo / "report.html").read_text()
    # verdict first: the banner is the first paragraph of the body
    assert page.index('id="verdict"') < page.index("<h2>Expectations</h2>") < page.index("<h2>Environment</h2>")
    assert '<p class="verdict inconclusive" id="verdict"><strong>INCONCLUSIVE</strong>: 1 of 4 expectations could not be judged here.</p>' in page
    assert "Failing tiles: <strong class=\"no\">128x256x128, 256x128x128</strong>" in page
    assert table_rows(page, "expectations") == 4


def test_every_section_with_exact_marks(demo: Path) -> None:
    page = (demo / "report.html").read_text()
    # the real 0.6.3 / sm120 analysis: 48 kernels, the FINALIZE (no swap_ab) ones of the big tiles over
    assert len(marks(page, "smem-chart", "rect", "bar")) == 48
    assert [(b["data-tactic"], b["data-output"], b["data-bytes"]) for b in marks(page, "smem-chart", "rect", "bar", "over")] == [
        ("14", "bf16", "102400"), ("14", "f16", "102400"), ("15", "bf16", "102400"), ("15", "f16", "102400")]
    capacity = {m["data-arches"]: m["data-bytes"] for m in marks(page, "smem-chart", "line", "capacity")}
    assert capacity == {"sm90 sm100": "232448", "sm120": "101376"}
    assert [m["data-arches"] for m in marks(page, "smem-chart", "line", "capacity", "target")] == ["sm120"]
    # one bar and one point per problem of the real H200 sweep: 28 decode, 12 prefill
    assert len(marks(page, "sweep-fraction-chart", "rect", "bar")) == 40
    assert len(marks(page, "sweep-fraction-chart", "rect", "bar", "decode")) == 28
    assert len(marks(page, "sweep-fraction-chart", "rect", "bar", "prefill")) == 12
    assert len(marks(page, "sweep-roofline-chart", "circle", "point")) == 40
    assert table_rows(page, "best-tiles") == 40
    assert "copy 4273 GB/s (read + write), read 4197 GB/s, dense bf16 GEMM 787 TFLOP/s" in page
    # the real triage: 2 failing tactics, 11 timeline events, the autotune skips in red
    assert table_rows(page, "autotune-failures") == 2
    assert "Autotune failures: 2 tactic(s), 32 failure line(s)" in page
    # set beside the static-smem step's prediction: gemm2 14 and 15, both predicted at 102400 B, both failed
    assert "Triage and static analysis, per tactic: they agree" in page
    assert table_rows(page, "reconciliation") == 2
    assert "failed, predicted to overflow (102 400 B vs 101 376 B)" in page
    spans = marks(page, "timeline-chart", "rect", "span")
    assert [s["data-event"] for s in spans][:4] == ["load_weight_end", "server_autotune_start", "autotune_process_start",
                                                    "autotune_skip"]
    assert len(spans) == 11
    assert [s["data-event"] for s in marks(page, "timeline-chart", "rect", "span", "bad")] == ["autotune_skip"]
    # telemetry from the serve workload's sampler: 4 metrics x 8 GPUs, the power limit drawn
    for metric in ("power_w", "util_pct", "mem_used_mib", "sm_clock_mhz"):
        assert [m["data-gpu"] for m in marks(page, f"telemetry-{metric}", "polyline", "series")] == [str(g) for g in range(8)]
    assert [m["data-watts"] for m in marks(page, "telemetry-power_w", "line", "reference", "limit")] == ["600.0"]
    assert table_rows(page, "telemetry-per-gpu") == 8
    # artifacts: every file of the record but report.html itself, plus manifest.json
    manifest = json.loads((demo / "manifest.json").read_text())
    links = [a["href"] for tag, a, _ in elements(page) if tag == "a"]
    assert links == ["manifest.json", *sorted(p for p in manifest["artifacts"] if p != "report.html")]
    assert all((demo / href).is_file() for href in links)


def test_the_page_loads_nothing(demo: Path) -> None:
    page = (demo / "report.html").read_text()
    assert not re.search(r"https?://", page)
    assert not re.search(r"<script|<link|<img|<iframe|<object|<embed|\bsrc\s*=|url\(|@import", page, re.IGNORECASE)
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page


def test_rows_built_by_the_analysis() -> None:
    """The row keys of analysis.build_rows: a bar per sized row, a note for the unsupported one."""
    page = render(steps_with(smem=("static-smem", smem_result())))
    bars = marks(page, "smem-chart", "rect", "bar")
    assert [(b["data-tactic"], b["data-bytes"], b["data-over"]) for b in bars] == [
        ("3", "98304", "no"), ("15", "102400", "yes"), ("21", "93184", "no")]
    assert "gemm2 #16 128x128x512 NONE swap_ab bf16" in page and ">unsupported</text>" in page
    assert "Failing tiles: <strong class=\"no\">256x128x128</strong>" in page
    assert "Not dispatchable: 128x128x512." in page


def test_sections_only_for_steps_with_results() -> None:
    page = render(steps_with(probe=("smem-probe", None)))
    for section in ('id="static-smem"', 'id="tile-sweep"', 'id="triage"', 'id="telemetry"', "<svg"):
        assert section not in page
    page = render(steps_with(serve=("serve", {"status": "ok"})))
    assert 'id="telemetry"' not in page  # serve ran but recorded no telemetry
    page = render(steps_with(serve=("serve", {"status": "ok", "telemetry": {
        "available": False, "error": "nvidia-smi is not on the PATH", "per_gpu": [], "samples": []}})))
    assert '<p class="note">No telemetry samples: nvidia-smi is not on the PATH</p>' in page and "<svg" not in page
    page = render({"serve": StepEntry("serve", "serve", "ok", result={"telemetry": {"error": "nvidia-smi is not there"}})})
    assert 'id="serve"' not in page  # no status: not a serve result (the runner made it the step's error)


def test_text_is_escaped() -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    result = smem_result()
    result["rows"][0]["tile"] = hostile
    result["failing_tiles"] = [hostile]
    triage = triage_result()
    triage["reason"] = hostile
    verdict = copy.deepcopy(VERDICT)
    verdict.summary = hostile
    verdict.expectations[0].observed = hostile
    page = render(steps_with(smem=("static-smem", result), triage=("triage", triage)), verdict=verdict,
                  artifacts={hostile: Artifact(hostile, 1)})
    assert "<script" not in page and "<img" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;") >= 6
    href = next(a["href"] for tag, a, _ in elements(page) if tag == "a" and a["href"] != "manifest.json")
    assert href == "%3Cscript%3Ealert%281%29%3C/script%3E%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%282%29%3E"


def test_charts_degrade_with_missing_fields() -> None:
    smem = {"arch": "sm120", "rows": [{"tile": "128x256x128"}, {"op": "x", "tactic": 1, "kernel_smem_bytes": 200000}]}
    sweep = {"best": [{"problem": "p1", "phase": "decode", "fraction_of_roofline": 0.5}, {"problem": "p2", "config": None,
                                                                                          "reason": "no configuration ran"}],
             "roofline": {}}
    triage = {"verdict": "READY", "autotune_failures": [{"tile": "128x256x128"}],
              "timeline": [{"event": "ready", "first": "not a time"}, {"event": "load_weight_end", "first": "2026-02-19 10:04:50"}]}
    serve = {"telemetry": [{"t_s": 0, "gpu": 0, "power_w": None}, {"t_s": 1, "gpu": 0, "power_w": 300}, {"gpu": 1}]}
    page = render(steps_with(smem=("static-smem", smem), sweep=("tile-sweep", sweep), triage=("triage", triage),
                             serve=("serve", serve)))
    # the arch's known capacity stands in for a missing capacity_bytes
    assert [b["data-over"] for b in marks(page, "smem-chart", "rect", "bar")] == ["yes"]
    assert "no size" in page
    assert len(marks(page, "sweep-fraction-chart", "rect", "bar")) == 1
    assert 'id="sweep-roofline-chart"' not in page  # no ceilings, no problems: no roofline
    assert "Ceilings measured in this run: none recorded." in page
    assert table_rows(page, "best-tiles") == 2
    assert table_rows(page, "autotune-failures") == 1
    assert [s["data-event"] for s in marks(page, "timeline-chart", "rect", "span")] == ["load_weight_end"]
    assert len(marks(page, "telemetry-power_w", "polyline", "series")) == 1
    assert 'id="telemetry-util_pct"' not in page


def test_an_exactly_full_kernel_is_not_red() -> None:
    smem = {"arch": "sm120", "capacity_bytes": 101376,
            "rows": [{"op": "a", "tactic": 0, "kernel_smem_bytes": 101376}, {"op": "a", "tactic": 1, "kernel_smem_bytes": 101377}]}
    page = render(steps_with(smem=("static-smem", smem)))
    assert [b["data-over"] for b in marks(page, "smem-chart", "rect", "bar")] == ["no", "yes"]


def test_write_html_report_hashes_the_record_when_the_manifest_has_not_yet(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "steps" / "serve").mkdir(parents=True)
    (run_dir / "steps" / "serve" / "server.log").write_bytes(b"ready\n")
    (run_dir / "report.html").write_text("stale")
    path = write_html_report(run_dir, dataclasses.replace(MANIFEST, artifacts={}), VERDICT,
                             steps_with(serve=("serve", {"telemetry": telemetry(gpus=3)})))
    page = path.read_text()
    assert path == run_dir / "report.html"
    assert [a["href"] for tag, a, _ in elements(page) if tag == "a"] == ["manifest.json", "steps/serve/server.log"]
    assert "1 file(s) of this record" in page
    assert hashlib.sha256(b"ready\n").hexdigest() in page
    assert len(marks(page, "telemetry-power_w", "polyline", "series")) == 3


def test_sweep_roofline_geometry() -> None:
    """The roof bends at the ridge point: dense TFLOP/s / copy bandwidth = 786.75e12 / 4272.95e9 = 184.1 FLOP/B."""
    page = render(steps_with(sweep=("tile-sweep", sweep_result())))
    roof = marks(page, "sweep-roofline-chart", "polyline", "roof")
    assert len(roof) == 1
    points = [tuple(map(float, p.split(","))) for p in roof[0]["points"].split()]
    assert len(points) == 3
    assert points[1][1] == points[2][1]  # flat compute ceiling after the ridge
    # x axis: 0.1 .. 10000 (5 decades) over 560 px from x=64; the ridge at log10(184.12) - log10(0.1) = 3.265 decades
    assert points[1][0] == pytest.approx(64 + 560 * 3.265 / 5, abs=0.2)
