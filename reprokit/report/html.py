"""``report.html``: the run's report for a browser, in one self-contained file.

Verdict first, then the expectations (the data of ``report.md``), the
environment, and the sections each step kind draws for its steps
(``reprokit/step_kinds/``): shared memory per kernel against the
SM90/SM100/SM120 capacities, the sweep's roofline, the autotune failures and
the warmup timeline, GPU telemetry; last, a link to every raw artifact of the
record. CSS and SVG charts are inline, there is no
script, and a Content-Security-Policy forbids every load, so the file opens
anywhere (a CI artifact, an air-gapped laptop) and asks nothing of the network.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from reprokit.draw.svg import esc
from reprokit.draw.tables import html_bytes, html_table
from reprokit.output.hosttext import shown
from reprokit.records.atomic import write_text_atomic
from reprokit.records.fingerprint import Driver, Fingerprint, HostFacts
from reprokit.records.models import Artifact, Manifest, StepEntry, Verdict, Word
from reprokit.records.run_dir import MANIFEST, RunRecord
from reprokit.report import sections
from reprokit.report.headline import Headline, headline
from reprokit.report.judge import plain
from reprokit.report.markdown import JOB_COLUMNS, NOT_PULLED_NOTE, job_rows, not_pulled_rows
from reprokit.report.reasons import refer, shared_reasons

REPORT_HTML = "report.html"
VERDICT_CLASS = {Word.PASS: "pass", Word.FAIL: "fail", Word.INCONCLUSIVE: "inconclusive"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d232a; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d5dbe1; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.mono, code, td.mono { font-family: "DejaVu Sans Mono", ui-monospace, monospace; font-size: 12px; }
.verdict { font-size: 18px; padding: 12px 16px; border-radius: 6px; border-left: 8px solid; margin: 8px 0 12px; }
.verdict.pass { background: #e8f5e9; border-color: #2e7d32; } .verdict.pass strong { color: #2e7d32; }
.verdict.fail { background: #ffebee; border-color: #c62828; } .verdict.fail strong { color: #c62828; }
.verdict.inconclusive { background: #fff8e1; border-color: #b26a00; } .verdict.inconclusive strong { color: #b26a00; }
.verdict.other { background: #eceff1; border-color: #546e7a; }
.meta { color: #546e7a; } .note { color: #6b5a00; background: #fffbe6; padding: 6px 10px; border-radius: 4px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d5dbe1; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { max-width: 420px; overflow-wrap: anywhere; }
.status-PASS, .yes { color: #2e7d32; font-weight: 600; } .status-FAIL, .no { color: #c62828; font-weight: 600; }
.status-INCONCLUSIVE { color: #b26a00; font-weight: 600; }
tr.drift td { background: #fff3e0; }
figure { margin: 10px 0 18px; } figcaption { color: #546e7a; font-size: 12px; max-width: 900px; }
svg.chart { display: block; font-size: 11px; }
svg .grid { stroke: #e3e7eb; } svg .tick, svg .axis-label, svg .legend-label { fill: #546e7a; }
svg .row-label { fill: #1d232a; font-size: 11px; } svg .value { fill: #37474f; font-size: 10px; }
svg .value.inside { fill: #fff; }
svg .note { fill: #8d6e63; font-style: italic; } svg .chart-title { font-weight: 600; fill: #1d232a; }
svg .bar.fits { fill: #4a78b5; } svg .bar.over { fill: #c62828; }
svg .capacity { stroke: #37474f; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .capacity.target { stroke: #c62828; stroke-width: 2; }
svg .capacity-label { fill: #37474f; font-weight: 600; } svg .target-label { fill: #c62828; }
svg .decode { fill: #1f77b4; } svg .prefill { fill: #e6821e; } svg .other { fill: #90a4ae; }
svg .reference { stroke: #37474f; stroke-dasharray: 4 3; } svg .reference.target { stroke: #2e7d32; }
svg .reference-label { fill: #37474f; font-size: 10px; } svg .reference.limit { stroke: #c62828; }
svg .roof { fill: none; stroke: #37474f; stroke-width: 2; }
svg .point { stroke: #fff; stroke-width: 1; }
svg .span.bad { fill: #c62828; } svg .span.good { fill: #2e7d32; } svg .span.neutral { fill: #607d8b; }
svg .series { fill: none; stroke-width: 1.5; }
svg .window { fill: #fff3e0; } svg .window-label { fill: #b26a00; font-size: 10px; }
svg .p0 { fill: #1f77b4; } svg .p1 { fill: #e6821e; } svg .p2 { fill: #2ca02c; }
svg .l0 { fill: #1f77b4; } svg .l1 { fill: #e6821e; } svg .l2 { fill: #2ca02c; }
.description { font-style: italic; color: #37474f; } td.why { color: #546e7a; font-size: 12px; }
svg .s0 { stroke: #1f77b4; } svg .s1 { stroke: #e6821e; } svg .s2 { stroke: #2ca02c; } svg .s3 { stroke: #d62728; }
svg .s4 { stroke: #9467bd; } svg .s5 { stroke: #8c564b; } svg .s6 { stroke: #e377c2; } svg .s7 { stroke: #7f7f7f; }
.smallmultiples { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.swatch { display: inline-block; width: 18px; height: 4px; margin: 0 4px 3px 12px; vertical-align: middle; }
.sw0 { background: #1f77b4; } .sw1 { background: #e6821e; } .sw2 { background: #2ca02c; } .sw3 { background: #d62728; }
.sw4 { background: #9467bd; } .sw5 { background: #8c564b; } .sw6 { background: #e377c2; } .sw7 { background: #7f7f7f; }
"""


def write_html_report(run_dir: Path, manifest: Manifest, verdict: Verdict, steps: dict[str, StepEntry]) -> Path:
    """Write ``run_dir/report.html`` and return its path.

    The runner calls this before the manifest lists the artifacts' hashes, so
    when the manifest has none yet they are computed here the way the record
    computes them (``RunRecord.hash_artifacts``).
    """
    artifacts = manifest.artifacts or RunRecord(run_dir.parent, run_dir.name, manifest).hash_artifacts()
    artifacts = {rel: artifact for rel, artifact in artifacts.items() if rel != REPORT_HTML}
    path = run_dir / REPORT_HTML
    write_text_atomic(path, shown(render_html(manifest, verdict, steps, artifacts), multiline=True))  # a name's RLO shows
    return path


def _causes(said: Headline) -> list[str]:
    """The root causes under the verdict (the death first, with its traceback's last lines), or nothing."""
    lines = said.lines()[1:]
    if not lines:
        return []
    items = []
    for line in lines:
        if line.startswith("  |") and items:
            items[-1] += f"<br><code>{esc(line.strip()[1:].strip())}</code>"
        else:
            items.append(esc(line.removeprefix("cause: ")))
    return ['<ul class="causes" id="causes">', *(f"<li>{item}</li>" for item in items), "</ul>"]


def render_html(manifest: Manifest, verdict: Verdict, steps: dict[str, StepEntry],
                artifacts: dict[str, Artifact]) -> str:
    kit = manifest.kit_name or "?"
    host = manifest.host_name or "?"
    word = verdict.verdict
    notes, reasons = shared_reasons(verdict.expectations, manifest.fingerprint, steps)
    drawn = sections.RunSections(steps)  # each result checked against its kind once
    said = headline(verdict, steps)
    body = [
        f"<h1>{esc(kit)} on {esc(host)}: {esc(said.words.split(':')[0])} ({esc(word)})</h1>",
        f'<p class="verdict {VERDICT_CLASS.get(word, "other")}" id="verdict"><strong>{esc(word)}</strong>: '
        f"{esc(verdict.summary)}.</p>",
        *_causes(said),
        f'<p class="meta">Run <code>{esc(manifest.run_id)}</code>, started {esc(manifest.started)}, '
        f"reprokit {esc(manifest.reprokit.get('version'))}{esc(_source(manifest))}.</p>",
        *_description(manifest),
        *_drift_note(manifest),
        *drawn.html("headline"),
        *_expectations(verdict, notes, reasons),
        *drawn.html("findings"),
        *_environment(manifest, notes),
        *_steps_table(steps, notes),
        *drawn.html("details"),
        *_not_pulled(steps),
        *_artifacts(artifacts),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(kit)} on {esc(host)}: {esc(word)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body) + "\n</body></html>\n"
    )


# -- building blocks -----------------------------------------------------------------------------

def _drift_note(manifest: Manifest) -> list[str]:
    drift = manifest.pin_drift or {}
    if not drift:
        return []
    runtime = (manifest.host or {}).get("runtime")
    text = "; ".join(f"{k} pinned {v.get('pinned')}, installed {v.get('installed')}" for k, v in drift.items())
    return [f'<p class="note">Pins differ from what ran: {esc(text)} (runtime {esc(runtime)}: the host\'s own packages ran).</p>']


def _source(manifest: Manifest) -> str:
    source = manifest.source or {}
    text = f", git {str(source['git_commit'])[:12]}" + (" (with local changes)" if source.get("git_dirty") else "") \
        if source.get("git_commit") else ""
    return text + (f", CI run {source['ci_run_url']}" if source.get("ci_run_url") else "")


def _description(manifest: Manifest) -> list[str]:
    description = manifest.kit.description if manifest.kit else None
    return [f'<p class="description" id="kit-description">{esc(" ".join(str(description).split()))}</p>'] if description else []


def _expectations(verdict: Verdict, notes: list, reasons: dict[str, str]) -> list[str]:
    rows = [[j.name, j.step, (j.status, f"status-{j.status}"), j.expected, (plain(j.observed) if j.observed is not None else None, "wrap mono"),
             (reasons.get(j.name, j.reason), "wrap"), (j.why, "wrap why")]
            for j in verdict.expectations]
    headers = ["expectation", "step", "status", "expected", "observed", "reason", "why"]
    if not any(j.why for j in verdict.expectations):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    out = ["<h2>Expectations</h2>", html_table(headers, rows, "expectations")]
    if notes:
        out.append('<ul id="shared-reasons">' + "".join(
            f'<li id="note-{n.number}"><strong>note {n.number}</strong>, {esc(n.sentence())}</li>' for n in notes) + "</ul>")
    return out


def _environment(manifest: Manifest, notes: list) -> list[str]:
    fp = manifest.fingerprint or Fingerprint()
    host = manifest.host or {}
    machine = fp.host or HostFacts()
    driver = fp.driver or Driver()
    out = ["<h2>Environment</h2>", html_table(None, [
        ["host", f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})"],
        ["machine", f"{machine.machine} {machine.kernel}, Python {machine.python}"],
        ["driver", driver.driver_release if fp.driver else f"none: {refer(fp.gpu_reason, notes)}"],
        ["CUDA driver API", driver.cuda_driver_api],
        ["nvcc", fp.nvcc],
    ], "environment")]
    devices = fp.devices
    if devices:
        out += ["<h3>GPUs</h3>", html_table(
            ["#", "name", "arch", "SMs", "smem/block (B)", "smem/block opt-in (B)", "smem/SM (B)"],
            [[d.index, d.name, d.gpu_arch, (d.multiprocessor_count, "num"),
              (html_bytes(d.max_shared_memory_per_block_bytes), "num"),
              (html_bytes(d.max_shared_memory_per_block_optin_bytes), "num"),
              (html_bytes(d.max_shared_memory_per_multiprocessor_bytes), "num")] for d in devices], "gpus")]
    pins = manifest.pins or {}
    installed = fp.packages
    drift = manifest.pin_drift or {}
    names = list(pins) + [n for n in installed if n not in pins and installed.get(n)]
    if names:
        out += ["<h3>Packages</h3>", html_table(
            ["package", "pinned", "on the host", ""],
            [[name, pins.get(name), installed.get(name) if name in installed else "(not inspected)",
              "pin drift" if name in drift else ""] for name in names],
            "packages", ["drift" if name in drift else "" for name in names])]
    return out


def _steps_table(steps: dict[str, StepEntry], notes: list) -> list[str]:
    rows = [[e.name, e.uses, e.status, (e.duration_s, "num"), (refer(e.reason, notes, step=e.name), "wrap"), e.log]
            for e in steps.values()]
    out = ["<h2>Steps</h2>", html_table(["step", "uses", "status", "duration (s)", "detail", "log"], rows, "steps")]
    jobs = job_rows(steps)
    return out + (["<h3>Batch jobs</h3>", html_table(JOB_COLUMNS, jobs, "jobs")] if jobs else [])


def _not_pulled(steps: dict[str, StepEntry]) -> list[str]:
    rows = not_pulled_rows(steps)
    if not rows:
        return []
    return ['<h2 id="not-pulled">Not pulled back</h2>', f"<p>{esc(NOT_PULLED_NOTE)}</p>",
            html_table(["step", "path on the host", "reason"], [[s, (p, "mono"), (r, "wrap")] for s, p, r in rows],
                       "not-pulled-table")]


def _artifacts(artifacts: dict[str, Artifact]) -> list[str]:
    rows = [f'<tr><td class="mono"><a href="{esc(quote(MANIFEST, safe="/"))}">{esc(MANIFEST)}</a></td>'
            '<td class="num"></td><td>the record\'s index: pins, fingerprint, steps and the sha256 of every file below</td></tr>']
    for rel, artifact in sorted(artifacts.items()):
        rows.append(f'<tr><td class="mono"><a href="{esc(quote(rel, safe="/"))}">{esc(rel)}</a></td>'
                    f'<td class="num">{esc(html_bytes(artifact.bytes))}</td><td class="mono">{esc(artifact.sha256)}</td></tr>')
    return ['<h2 id="artifacts">Artifacts</h2>',
            f"<p>{len(artifacts)} file(s) of this record, linked relative to this report.</p>",
            '<table id="artifact-links"><thead><tr><th>file</th><th>bytes</th><th>sha256</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>"]
