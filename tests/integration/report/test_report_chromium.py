"""report.html in a real headless Chromium (Debian's): it renders, the charts are there, nothing is requested.

The network check reads Chromium's own net log. Chromium makes background
requests of its own (time, component updates, accounts) whatever the flags;
those carry the initiator "not an origin". A request made for the page carries
the page's origin ("null" for file://) and the file:// site, and is what must
not exist. ``test_the_detector_sees_external_loads`` proves the check sees them.
Every host name resolves to nothing (--host-resolver-rules), so even a
request that slipped through could not leave the machine.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.unit.report.report_data import build_demo_record, marks, table_rows

UNAVAILABLE = REPO / ".cache" / "services" / "chromium.unavailable"
BROWSER_OWN_INITIATOR = "not an origin"


def chromium_or_skip() -> str:
    if UNAVAILABLE.is_file():
        pytest.skip(f"chromium unavailable: {UNAVAILABLE.read_text().strip()}")
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed; run tests/services/up (tests/services/up.d/30-chromium.sh)")
    return path


def run_chromium(chromium: str, page: Path, work: Path, *extra: str) -> tuple[str, list[dict]]:
    """Open ``page`` headless; return what Chromium printed and the net log's URL requests."""
    netlog = work / "netlog.json"
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={work / 'profile'}",
         "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={netlog}", *extra, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, url_requests(netlog)


def url_requests(netlog: Path) -> list[dict]:
    """Every URL request Chromium started: url, initiator, the site it was made for."""
    log = json.loads(netlog.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [{"url": e["params"]["url"], "initiator": e["params"].get("initiator"),
             "site": e["params"].get("site_for_cookies", "")}
            for e in log["events"] if e["type"] == start_job and "url" in (e.get("params") or {})]


def made_for_the_page(requests: list[dict]) -> list[str]:
    return [r["url"] for r in requests if r["initiator"] != BROWSER_OWN_INITIATOR or "file://" in r["site"]]


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    return build_demo_record(tmp_path_factory.mktemp("report"))


def test_renders_with_its_charts_and_requests_nothing(chromium: str, record: Path, tmp_path: Path) -> None:
    dom, requests = run_chromium(chromium, record / "report.html", tmp_path, "--dump-dom")
    assert made_for_the_page(requests) == []
    # the DOM as Chromium built it: verdict first, every chart with one mark per data point
    assert '<p class="verdict inconclusive" id="verdict"><strong>INCONCLUSIVE</strong>: 1 of 4 expectations could not be judged here.</p>' in dom
    assert dom.index('id="verdict"') < dom.index('id="smem-headroom-chart"') < dom.index('id="expectations"') \
        < dom.index('id="serve-throughput-chart"') < dom.index('id="telemetry-power_w"') < dom.index('id="smem-chart"') \
        < dom.index('id="sweep-roofline-chart"') < dom.index('id="timeline-chart"') < dom.index('id="artifact-links"')
    # the headline: 2 kernels 1024 B over, 4 nearest fitting ones 3072 B under, drawn against the limit
    assert [m["data-delta"] for m in marks(dom, "smem-headroom-chart", "rect", "bar")] == ["1024", "1024"] + ["-3072"] * 4
    assert table_rows(dom, "smem-accounting") == 2
    # serving: one bar per concurrency, three latency lines, the benchmark windows shaded on the power chart
    assert [m["data-concurrency"] for m in marks(dom, "serve-throughput-chart", "rect", "bar")] == ["1", "8", "32"]
    assert len(marks(dom, "serve-latency-chart", "polyline", "series")) == 3
    assert [m["data-window"] for m in marks(dom, "telemetry-power_w", "rect", "window")] == ["c1", "c8", "c32"]
    assert "GPUs underfed: median 235.5 W of 600 W at concurrency 32" in dom
    assert "throughput flat from concurrency 8 to 32: 1580 -&gt; 1640 tok/s" in dom
    assert table_rows(dom, "serve-performance") == 3
    assert len(marks(dom, "smem-chart", "rect", "bar")) == 48
    assert len(marks(dom, "smem-chart", "rect", "bar", "over")) == 4
    assert len(marks(dom, "smem-chart", "line", "capacity")) == 2
    assert len(marks(dom, "sweep-fraction-chart", "rect", "bar")) == 40
    assert len(marks(dom, "sweep-roofline-chart", "circle", "point")) == 40
    assert len(marks(dom, "timeline-chart", "rect", "span")) == 11
    assert sum(len(marks(dom, f"telemetry-{m}", "polyline", "series"))
               for m in ("power_w", "util_pct", "mem_used_mib", "sm_clock_mhz")) == 32
    assert table_rows(dom, "autotune-failures") == 2
    assert table_rows(dom, "artifact-links") == 11


def test_screenshot(chromium: str, record: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _, requests = run_chromium(chromium, record / "report.html", tmp_path, "--hide-scrollbars", "--window-size=1280,4800",
                               f"--screenshot={shot}")
    assert made_for_the_page(requests) == []
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1280, 4800)
    assert shot.stat().st_size > 100_000  # text and charts, not a blank page


def test_the_detector_sees_external_loads(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="stylesheet" href="https://fonts.example.invalid/a.css">'
                    '</head><body><img src="http://example.invalid/x.png"><p>leaky</p></body></html>')
    dom, requests = run_chromium(chromium, page, tmp_path, "--dump-dom")
    assert "<p>leaky</p>" in dom
    assert sorted(made_for_the_page(requests)) == ["http://example.invalid/x.png", "https://fonts.example.invalid/a.css"]


def test_the_runs_index_renders_and_requests_nothing(chromium: str, tmp_path: Path) -> None:
    from reprokit.records.history import list_runs
    from reprokit.report.runs_index import write_index

    page = write_index(tmp_path / "index.html", list_runs(REPO / "evidence" / "h200"))  # the first three H200 records
    dom, requests = run_chromium(chromium, page, tmp_path, "--dump-dom")
    assert made_for_the_page(requests) == []
    assert "<h1>3 run(s), 3 kit and host pair(s)</h1>" in dom
    assert [m["data-verdict"] for kit in ("ep8-crash", "smem-probe", "tile-sweep")
            for m in marks(dom, f"trend-{kit}-local", "circle", "point")] == ["INCONCLUSIVE", "PASS", "PASS"]
    assert table_rows(dom, "runs") == 3


def test_host_text_stays_text_in_the_browser(chromium: str, tmp_path: Path) -> None:
    """Markup, template syntax and an ESC byte in every template's host text: Chromium builds no element of them."""
    import dataclasses

    from reprokit.records.models import Artifact
    from reprokit.report.html import write_html_report
    from tests.unit.report.report_data import elements
    from tests.unit.report.test_report_html import MANIFEST, VERDICT
    from tests.unit.report.test_report_templates import HOSTILE, hostile_steps

    manifest = dataclasses.replace(MANIFEST, host={"name": HOSTILE, "connection": "ssh", "runtime": "docker"},
                                   artifacts={f"steps/{HOSTILE}.log": Artifact("0" * 64, 1)})
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    page = write_html_report(run_dir, manifest, dataclasses.replace(VERDICT, summary=HOSTILE), hostile_steps())
    dom, requests = run_chromium(chromium, page, tmp_path, "--dump-dom")
    assert made_for_the_page(requests) == []
    built = elements(dom)
    assert {tag for tag, _, _ in built} & {"script", "img", "iframe", "object", "embed"} == set()
    assert [name for _, attrs, _ in built for name in attrs if name.startswith("on")] == []
    assert dom.count("{{ 7*7 }}{% raw %}\\x1b[31m") == 21  # every site of the unit test, as text
