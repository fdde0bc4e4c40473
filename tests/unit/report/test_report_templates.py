"""The report's templates: shipped, and host text in every one of them reaches the page escaped and inert.

Host text here is everything a run brings back: a tile name, a log line, a server's reason, a file name, a GPU's
name. Each is a template's data, never its source, so ``{{ 7*7 }}`` prints as it is; markup in it is escaped; an
ESC byte shows as ``\\x1b``.
"""

from __future__ import annotations

import dataclasses
import tomllib
from fnmatch import fnmatch
from pathlib import Path

from reprokit.records.history import RunSummary
from reprokit.records.models import Artifact
from reprokit.report.html import write_html_report
from reprokit.report.runs_index import write_index
from tests.unit.report.report_data import elements, smem_result, sweep_result, triage_result
from tests.unit.report.test_report_html import MANIFEST, VERDICT, steps_with

REPO = Path(__file__).resolve().parents[3]
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>{{ 7*7 }}{% raw %}\x1b[31m'
ESCAPED = ("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;{{ 7*7 }}{% raw %}"
           "\\x1b[31m")


def test_the_wheel_ships_every_template():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["reprokit"]
    templates = sorted(p.relative_to(REPO / "reprokit").as_posix() for p in (REPO / "reprokit").rglob("templates/**/*")
                       if p.is_file())
    assert [t for t in templates if not any(fnmatch(t, pattern) for pattern in patterns)] == []
    assert len(templates) == 11, templates


def hostile_steps() -> dict:
    """A result of each kind that draws a template, with host text in the fields it shows."""
    smem = smem_result()
    smem["rows"][0]["tile"] = HOSTILE  # the chart's label (SVG) and the accounting table
    smem["failing_tiles"] = [HOSTILE]
    triage = triage_result()
    triage["reason"] = HOSTILE
    triage["hint"] = HOSTILE
    triage["fatal"] = {"kind": "crash", "at": "server.log:7", "message": HOSTILE}
    sweep = sweep_result()
    sweep["best"][0]["config"] = HOSTILE
    serve = {"outcome": "crashed", "crash_dump": {"file": "server.log", "line": 3, "lines": [HOSTILE, HOSTILE]},
             "telemetry": {"error": HOSTILE}}
    probe = {"devices": [{"index": 0, "launch_at_optin_limit": {"dynamic_shared_bytes": 101376, "ok": False,
                                                               "error_name": "cudaErrorInvalidValue",
                                                               "error_string": HOSTILE}}]}
    return steps_with(smem=("static-smem", smem), triage=("triage", triage), sweep=("tile-sweep", sweep),
                      serve=("serve", serve), probe=("smem-probe", probe))


def assert_inert(page: str) -> None:
    tags = {tag for tag, _, _ in elements(page)}
    handlers = [name for _, attrs, _ in elements(page) for name in attrs if name.startswith("on")]
    assert (tags & {"script", "img", "iframe", "object", "embed"}, handlers) == (set(), [])
    assert "\x1b" not in page
    assert page.count("{{ 7*7 }}") == page.count(ESCAPED)  # printed as it is wherever it landed


def test_host_text_in_every_template_reaches_report_html_escaped_and_inert(tmp_path):
    manifest = dataclasses.replace(MANIFEST, host={"name": HOSTILE, "connection": "ssh", "runtime": "docker"},
                                   artifacts={f"steps/{HOSTILE}.log": Artifact("0" * 64, 1)})
    verdict = dataclasses.replace(VERDICT, summary=HOSTILE)
    page = write_html_report(tmp_path, manifest, verdict, hostile_steps()).read_text()
    assert_inert(page)
    sites = {"title, h1, environment: the host": 3, "the verdict's summary": 1, "the causes: the fatal line": 1,
             "artifact's name": 1, "static-smem: failing tiles; both charts' label and tooltip": 5,
             "triage: reason, hint, fatal": 3, "tile-sweep: both charts' tooltips, the best config": 3,
             "serve: the crash dump's two lines, the telemetry's error": 3, "smem-probe: the error string": 1}
    assert page.count(ESCAPED) == sum(sites.values())


def test_host_text_in_the_runs_index_is_escaped_and_inert(tmp_path):
    run = RunSummary(run_id=HOSTILE, dir=str(tmp_path / "missing"), status="complete", verdict="PASS", kit=HOSTILE,
                     host="rtx", gpu=HOSTILE, gpu_arch="sm120", driver=HOSTILE, versions=HOSTILE,
                     started="2026-02-19T10:00:00Z", git_commit=HOSTILE, held=1, judged=1)
    page = write_index(tmp_path / "index.html", [run]).read_text()
    assert_inert(page)
    # the table: run, kit, GPU, driver, versions, git; the trend chart: its id, title, heading, the point's
    # tooltip and its data-run
    assert page.count(ESCAPED) == 6 + 5
