"""``report.html``: the run's report for a browser, in one self-contained file.

Verdict first, then the expectations (the data of ``report.md``), the
environment, and the sections each step kind draws for its steps
(``reprokit/step_kinds/``): shared memory per kernel against the
SM90/SM100/SM120 capacities, the sweep's roofline, the autotune failures and
the warmup timeline, GPU telemetry; last, a link to every raw artifact of the
record. CSS (``templates/report.css``) and SVG charts are inline, there is no
script, and a Content-Security-Policy forbids every load, so the file opens
anywhere (a CI artifact, an air-gapped laptop) and asks nothing of the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from reprokit.draw.tables import html_bytes
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
from reprokit.report.templating import render_page

REPORT_HTML = "report.html"
VERDICT_CLASS = {Word.PASS: "pass", Word.FAIL: "fail", Word.INCONCLUSIVE: "inconclusive"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

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


def _causes(said: Headline) -> list[tuple[str, list[str]]]:
    """The root causes under the verdict (the death first), each with its traceback's last lines."""
    items: list[tuple[str, list[str]]] = []
    for line in said.lines()[1:]:
        if line.startswith("  |") and items:
            items[-1][1].append(line.strip()[1:].strip())
        else:
            items.append((line.removeprefix("cause: "), []))
    return items


def render_html(manifest: Manifest, verdict: Verdict, steps: dict[str, StepEntry],
                artifacts: dict[str, Artifact]) -> str:
    notes, reasons = shared_reasons(verdict.expectations, manifest.fingerprint, steps)
    said = headline(verdict, steps)
    description = manifest.kit.description if manifest.kit else None
    return render_page(
        "report.html", csp=CSP, kit=manifest.kit_name or "?", host=manifest.host_name or "?", word=verdict.verdict,
        said=said.words.split(":")[0], verdict_class=VERDICT_CLASS.get(verdict.verdict, "other"),
        summary=verdict.summary, causes=_causes(said), run_id=manifest.run_id, started=manifest.started,
        version=manifest.reprokit.get("version"), source=_source(manifest),
        description=" ".join(str(description).split()) if description else None,
        drift=_drift(manifest), runtime=(manifest.host or {}).get("runtime"),
        drawn=sections.RunSections(steps),  # each result checked against its kind once
        expectations=_expectations(verdict, reasons), notes=notes, machine=_machine(manifest, notes),
        gpus=_gpus(manifest), packages=_packages(manifest), steps=_steps(steps, notes), jobs=_jobs(steps),
        not_pulled=_not_pulled(steps), not_pulled_note=NOT_PULLED_NOTE, manifest=MANIFEST, manifest_href=quote(MANIFEST, safe="/"),
        artifacts=[(rel, quote(rel, safe="/"), html_bytes(artifact.bytes), artifact.sha256)
                   for rel, artifact in sorted(artifacts.items())],
    )


# -- what the page's tables hold -----------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    headers: list[str] | None
    rows: list[list[Any]]
    classes: list[str] | None = None  # each row's class, or ""


def _drift(manifest: Manifest) -> str:
    drift = manifest.pin_drift or {}
    return "; ".join(f"{k} pinned {v.get('pinned')}, installed {v.get('installed')}" for k, v in drift.items())


def _source(manifest: Manifest) -> str:
    source = manifest.source or {}
    text = f", git {str(source['git_commit'])[:12]}" + (" (with local changes)" if source.get("git_dirty") else "") \
        if source.get("git_commit") else ""
    return text + (f", CI run {source['ci_run_url']}" if source.get("ci_run_url") else "")


def _expectations(verdict: Verdict, reasons: dict[str, str]) -> Table:
    rows = [[j.name, j.step, (j.status, f"status-{j.status}"), j.expected, (plain(j.observed) if j.observed is not None else None, "wrap mono"),
             (reasons.get(j.name, j.reason), "wrap"), (j.why, "wrap why")]
            for j in verdict.expectations]
    headers = ["expectation", "step", "status", "expected", "observed", "reason", "why"]
    if not any(j.why for j in verdict.expectations):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    return Table(headers, rows)


def _machine(manifest: Manifest, notes: list) -> list[list[Any]]:
    fp = manifest.fingerprint or Fingerprint()
    host = manifest.host or {}
    machine = fp.host or HostFacts()
    driver = fp.driver or Driver()
    return [
        ["host", f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})"],
        ["machine", f"{machine.machine} {machine.kernel}, Python {machine.python}"],
        ["driver", driver.driver_release if fp.driver else f"none: {refer(fp.gpu_reason, notes)}"],
        ["CUDA driver API", driver.cuda_driver_api],
        ["nvcc", fp.nvcc],
    ]


def _gpus(manifest: Manifest) -> Table | None:
    devices = (manifest.fingerprint or Fingerprint()).devices
    if not devices:
        return None
    return Table(["#", "name", "arch", "SMs", "smem/block (B)", "smem/block opt-in (B)", "smem/SM (B)"],
                 [[d.index, d.name, d.gpu_arch, (d.multiprocessor_count, "num"),
                   (html_bytes(d.max_shared_memory_per_block_bytes), "num"),
                   (html_bytes(d.max_shared_memory_per_block_optin_bytes), "num"),
                   (html_bytes(d.max_shared_memory_per_multiprocessor_bytes), "num")] for d in devices])


def _packages(manifest: Manifest) -> Table | None:
    pins = manifest.pins or {}
    installed = (manifest.fingerprint or Fingerprint()).packages
    drift = manifest.pin_drift or {}
    names = list(pins) + [n for n in installed if n not in pins and installed.get(n)]
    if not names:
        return None
    return Table(["package", "pinned", "on the host", ""],
                 [[name, pins.get(name), installed.get(name) if name in installed else "(not inspected)",
                   "pin drift" if name in drift else ""] for name in names],
                 ["drift" if name in drift else "" for name in names])


def _steps(steps: dict[str, StepEntry], notes: list) -> Table:
    return Table(["step", "uses", "status", "duration (s)", "detail", "log"],
                 [[e.name, e.uses, e.status, (e.duration_s, "num"), (refer(e.reason, notes, step=e.name), "wrap"), e.log]
                  for e in steps.values()])


def _jobs(steps: dict[str, StepEntry]) -> Table | None:
    jobs = job_rows(steps)
    return Table(JOB_COLUMNS, jobs) if jobs else None


def _not_pulled(steps: dict[str, StepEntry]) -> Table | None:
    rows = not_pulled_rows(steps)
    if not rows:
        return None
    return Table(["step", "path on the host", "reason"], [[s, (p, "mono"), (r, "wrap")] for s, p, r in rows])
