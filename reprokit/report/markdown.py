"""``report.md``: verdict first, then the kinds' headlines (bytes against the limit), every expectation, the kinds'
findings (serving), the environment, the steps and the kinds' details.

It becomes the CI job summary, so what a reader needs first comes first, and
no cell is cut: a reason many expectations share is said once, as a note.
"""

from __future__ import annotations

from pathlib import Path

from reprokit.draw.tables import md_table
from reprokit.output.hosttext import shown
from reprokit.records.atomic import write_text_atomic
from reprokit.records.fingerprint import Fingerprint, HostFacts
from reprokit.records.models import Manifest, StepEntry, Verdict
from reprokit.records.run_dir import MANIFEST
from reprokit.report import sections
from reprokit.report.headline import headline
from reprokit.report.judge import plain
from reprokit.report.reasons import refer, shared_reasons

OBSERVED_CHARS = 120  # an observed value longer than this is shortened at a word or item boundary


def shorten(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, cut after a whole word or list item, never inside one."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(sep, 0, limit) for sep in (" ", ","))
    return (text[:cut] if cut > 0 else text[:limit]).rstrip(" ,") + " …"


NOT_PULLED_NOTE = ("These entries stayed on the host (links, FIFOs, unreadable or oddly named files), with the run's"
                   " directory there (`<workdir>/runs/RUN`): remove it on the host once you have looked.")


def not_pulled_rows(steps: dict[str, StepEntry]) -> list[list[str]]:
    """Every entry a step left on the host, and why: no file is dropped from the record silently."""
    return [[e.name, left.path, left.reason] for e in steps.values() for left in e.not_pulled or []]


def render(manifest: Manifest, verdict: Verdict, steps: dict[str, StepEntry]) -> str:
    fp = manifest.fingerprint or Fingerprint()
    drawn = sections.RunSections(steps)  # each result checked against its kind once
    host = manifest.host or {}
    said = headline(verdict, steps)
    lines = [
        f"# {manifest.kit_name} on {host.get('name')}: {said.words.split(':')[0]} ({verdict.verdict})",
        "",
        f"**{said.words}** ({verdict.verdict}: {verdict.summary}).",
        "",
        *([f"- {line.removeprefix('cause: ')}" if not line.startswith("  |") else f"  `{line.strip()}`"
           for line in said.lines()[1:]] + [""] if said.lines()[1:] else []),
        f"Run `{manifest.run_id}`, started {manifest.started}, reprokit {manifest.reprokit['version']}"
        + _source(manifest) + ".",
        "",
    ]
    description = manifest.kit.description if manifest.kit else None
    if description:
        lines += [f"> {' '.join(str(description).split())}", ""]
    drift = manifest.pin_drift or {}
    if drift:
        lines += [
            "> Pins differ from what ran: "
            + "; ".join(f"{k} pinned {v['pinned']}, installed {v['installed']}" for k, v in drift.items())
            + f" (runtime {host.get('runtime')}: the host's own packages ran).",
            "",
        ]
    lines += drawn.markdown("headline")
    lines += ["", "## Expectations", ""]
    notes, reasons = shared_reasons(verdict.expectations, fp, steps)
    with_why = any(j.why for j in verdict.expectations)
    lines += md_table(
        ["expectation", "step", "status", "expected", "observed", "reason"] + (["why"] if with_why else []),
        [[j.name, j.step, j.status, j.expected,
          shorten(plain(j.observed), OBSERVED_CHARS) if j.observed is not None else "", reasons.get(j.name, j.reason)]
         + ([j.why] if with_why else []) for j in verdict.expectations],
    )
    if notes:
        lines += [""] + [f"- **note {n.number}**, {n.sentence()}" for n in notes]
    lines += drawn.markdown("findings")
    lines += ["", "## Environment", ""]
    driver, machine = fp.driver, fp.host or HostFacts()
    env_rows = [
        ["host", f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})"],
        ["machine", f"{machine.machine} {machine.kernel}, Python {machine.python}"],
        ["driver", f"{driver.driver_release} (CUDA driver API {driver.cuda_driver_api})" if driver
         else f"none: {refer(fp.gpu_reason, notes)}"],
        ["nvcc", fp.nvcc],
        ["pins", ", ".join(f"{k} {v}" for k, v in (manifest.pins or {}).items())],
        ["installed", ", ".join(f"{k} {v}" for k, v in fp.installed.items()) or "(none of the pinned packages)"],
    ]
    lines += md_table(["", ""], env_rows)
    devices = fp.devices
    if devices:
        lines += ["", "### GPUs", ""]
        lines += md_table(
            ["#", "name", "arch", "SMs", "smem/block", "smem/block opt-in", "smem/SM"],
            [
                [d.index, d.name, d.gpu_arch, d.multiprocessor_count, d.max_shared_memory_per_block_bytes,
                 d.max_shared_memory_per_block_optin_bytes, d.max_shared_memory_per_multiprocessor_bytes]
                for d in devices
            ],
        )
    lines += ["", "## Steps", ""]
    lines += md_table(
        ["step", "uses", "status", "duration (s)", "detail", "log"],
        [[e.name, e.uses, e.status, e.duration_s, refer(e.reason, notes, step=e.name), e.log] for e in steps.values()],
    )
    if job_rows(steps):
        lines += ["", "### Batch jobs", ""]
        lines += md_table(JOB_COLUMNS, job_rows(steps))
    lines += drawn.markdown("details")
    kept = not_pulled_rows(steps)
    if kept:
        lines += ["", "## Not pulled back", "", NOT_PULLED_NOTE, ""]
        lines += md_table(["step", "path on the host", "reason"], kept)
    lines += ["", "## Artifacts", "", f"Every file of this record is listed with its sha256 in `{MANIFEST}`.", ""]
    return "\n".join(lines)


JOB_COLUMNS = ["step", "job", "nodes", "partition", "queue wait (s)", "state", "exit:signal", "restarts"]


def job_rows(steps: dict[str, StepEntry]) -> list[list]:
    """The Slurm job of each step that ran as one (its manifest entry's ``launch``); none for a session's steps."""
    return [[e.name, j.get("job_id"), j.get("nodes"), j.get("partition"), j.get("queue_wait_s"), j.get("state"),
             f"{j.get('exit_code', '')}:{j.get('signal', '')}", j.get("restarts")]
            for e in steps.values() if (j := e.launch)]


def _source(manifest: Manifest) -> str:
    source = manifest.source or {}
    text = f", git {str(source['git_commit'])[:12]}" + (" (with local changes)" if source.get("git_dirty") else "") \
        if source.get("git_commit") else ""
    return text + (f", CI run {source['ci_run_url']}" if source.get("ci_run_url") else "")


def write_report(run_dir: Path, manifest: Manifest, verdict: Verdict, steps: dict[str, StepEntry]) -> Path:
    path = run_dir / "report.md"
    write_text_atomic(path, shown(render(manifest, verdict, steps), multiline=True))  # host text is shown, never control
    return path
