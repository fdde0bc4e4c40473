"""The report of a real `invoke repro ep8-crash` against the serve test double (real SSH, Docker, workloads, triage),
opened in headless Chromium: the serve section with its findings and charts; the console and both reports say a
reason shared by many expectations once. The host's GPU, the sglang server and nvidia-smi are test doubles
(tests/doubles: an sm120 GPU; 8 GPUs at 235.5 W of 600 W in the server's telemetry)."""

from __future__ import annotations

import json

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest
from tests.integration.e2e.test_ep8_crash_e2e import host_with_model, serve_double  # noqa: F401 - a fixture
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_docker import BASE
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in
from tests.integration.report.test_report_chromium import chromium_or_skip, made_for_the_page, run_chromium
from tests.unit.report.report_data import marks, table_rows


@pytest.fixture(scope="module")
def e2e_run(tmp_path_factory, serve_double):  # noqa: F811 - the fixture imported above
    tmp = tmp_path_factory.mktemp("e2e-report")
    _, inventory, known = host_with_model(tmp, "e2e-report")
    proc = invoke_repro(tmp, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                        "--image", f"serve={serve_double}", kit="ep8-crash")
    (run_dir,) = runs_in(tmp / "runs")
    return proc, run_dir


@pytest.fixture(scope="module")
def gpuless_run(tmp_path_factory):
    """The same kit on a GPU-less host (h1 natively, without the libcuda double): the steps that need a GPU are
    planned out with the fingerprint's reason. Docker is not the runtime here: the test dockerd's GPU hook would
    give the containers the double's GPU (tests/doubles/README.md)."""
    tmp = tmp_path_factory.mktemp("e2e-report-no-gpu")
    work = host_workdir("h1", "e2e-report-no-gpu")
    inventory = write_inventory(tmp / "inv.yml", {"h1": {"workdir": work, "models_dir": work / "models"}}, gpu=False)
    known = known_hosts_for(tmp / "known_hosts", "h1")
    proc = invoke_repro(tmp, inventory, known, "--host", "h1", "--skip", "static-smem", kit="ep8-crash")
    (run_dir,) = runs_in(tmp / "runs")
    return proc, run_dir


def test_the_serve_section_with_findings_and_charts_in_chromium(e2e_run, tmp_path):
    chromium = chromium_or_skip()
    proc, run_dir = e2e_run
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    serve = json.loads((run_dir / "steps" / "serve" / "result.json").read_text())
    assert list(serve["performance"]["by_concurrency"]) == ["c1", "c8", "c32"]
    c32 = serve["performance"]["by_concurrency"]["c32"]
    assert (c32["power_median_w"], c32["power_limit_w"], c32["gpus"]) == (235.5, 600.0, 8)
    dom, requests = run_chromium(chromium, run_dir / "report.html", tmp_path, "--dump-dom")
    assert made_for_the_page(requests) == []
    assert dom.index('id="serve"') < dom.index('id="serve-findings"') < dom.index('id="serve-throughput-chart"') \
        < dom.index('id="telemetry-power_w"')
    assert "GPUs underfed: median 235.5 W of 600 W at concurrency 32 (39% of the limit; utilisation 41.0 %, 8 GPU(s)" in dom
    assert [m["data-concurrency"] for m in marks(dom, "serve-throughput-chart", "rect", "bar")] == ["1", "8", "32"]
    assert len(marks(dom, "serve-latency-chart", "polyline", "series")) == 3
    assert [m["data-watts"] for m in marks(dom, "telemetry-power_w", "line", "limit")] == ["600.0"]
    assert len(marks(dom, "telemetry-power_w", "polyline", "series")) == 8
    assert table_rows(dom, "serve-performance") == 3
    assert table_rows(dom, "warmup-phases") == 3  # autotuning, CUDA graph capture, ready: from the replayed log
    report_md = (run_dir / "report.md").read_text()
    assert "- GPUs underfed: median 235.5 W of 600 W at concurrency 32" in report_md
    assert "| 32 | 128 |" in report_md


def test_a_reason_many_expectations_share_is_said_once(gpuless_run):
    proc, run_dir = gpuless_run
    manifest = load_manifest(run_dir).to_json()
    gpu_reason = manifest["fingerprint"]["gpu_reason"]
    assert gpu_reason.startswith("no NVIDIA driver")
    verdict = json.loads((run_dir / "verdict.json").read_text())
    sharing = [j["name"] for j in verdict["expectations"] if gpu_reason in j["reason"]]
    assert sharing == ["sm120-optin-limit", "server-came-up", "smoke-request-answered", "autotuning-ran",
                       "server-ready-despite-autotune-failures", "failures-are-the-big-tiles",
                       "triage-agrees-with-static-analysis", "gpu-power-at-c32"]
    console = " ".join((proc.stdout + proc.stderr).split())  # rich wraps long lines at 140 columns off a terminal
    assert console.count(gpu_reason) == 2  # under the fingerprint, and the note after the table
    assert f"note 1: no GPU here: 8 expectations need one: {gpu_reason}" in " ".join(proc.stdout.split())
    # the probe's reason is the fingerprint's; the sweep's and the serve's are the planner's with it; the triage's
    # quotes the serve's, said on the line before: each line names where the reason was said
    assert "[2/5] probe (smem-probe) ... no_driver in" in console and "no_driver in 0" in console
    assert "no_driver" in console and "the same as the fingerprint" in console and "see above" not in console
    assert "[3/5] sweep (tile-sweep) ... not run: needs a CUDA GPU; as the fingerprint said" in console
    assert "[4/5] serve (serve) ... the same as sweep" in console
    assert "did not produce it (as sweep said)" in console  # the serve's reason is the sweep's, said first there
    assert (run_dir / "report.md").read_text().count(gpu_reason) == 1
    html = (run_dir / "report.html").read_text()
    assert html.count(gpu_reason.replace("'", "&#x27;")) == 1
    assert proc.stdout.rstrip().splitlines()[-1] == f"report: {run_dir / 'report.html'}"
