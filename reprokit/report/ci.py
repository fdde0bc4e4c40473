"""What the GitOps workflow needs from a run, as plain functions (``.github/workflows/repro.yml`` calls them).

- ``changed_kits``: a push runs the kits it changed, not always ep8-crash: ``kits/<kit>.yml`` is that kit,
  ``kits/models/<m>.yml`` every kit whose steps use model ``m``, ``docker/**`` and ``inventory.yml`` every kit.
- ``annotations``: the verdict as GitHub workflow commands: FAIL is an ``::error`` per expectation that did not
  hold, INCONCLUSIVE a ``::warning`` with its reasons (a reason shared by many said once).
- The job's status, documented in the README: PASS and INCONCLUSIVE succeed (INCONCLUSIVE with its warning
  annotation: the host could not judge everything, nothing failed); FAIL, a step error, a host error or no record
  fail the job. ``--inconclusive-fails`` makes INCONCLUSIVE fail too (a host that must judge every expectation).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ConfigError
from reprokit.records.models import Verdict, Word
from reprokit.records.run_dir import load_manifest, load_verdict
from reprokit.report.reasons import shared_reasons

ALL_KITS_PATHS = ("docker/", "inventory.yml")
NO_BASE = "0" * 40  # GitHub's `before` of a push that created the branch


def git_changed(base: str, head: str, cwd: Path) -> list[str]:
    done = subprocess.run(["git", "diff", "--name-only", f"{base}..{head}"], cwd=cwd, capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["failed"])[0]
        raise ConfigError(f"git diff {base}..{head}: {first}; is the checkout deep enough "
                          "(actions/checkout fetch-depth: 0)?")
    return [line for line in done.stdout.splitlines() if line]


def changed_kits(changed: list[str], kits_dir: Path) -> list[str]:
    """The kits a change touches, by name, in order."""
    names = kit_names(kits_dir)
    if any(path.startswith(ALL_KITS_PATHS) for path in changed):
        return names
    kits_prefix = f"{kits_dir.as_posix().rstrip('/')}/"
    touched: set[str] = set()
    models = {Path(p).stem for p in changed if p.startswith(f"{kits_prefix}models/") and p.endswith(".yml")}
    for path in changed:
        if path.startswith(kits_prefix) and path.count("/") == kits_prefix.count("/") and path.endswith(".yml"):
            if Path(path).stem in names:  # a deleted kit has nothing to run
                touched.add(Path(path).stem)
    for name in names:
        if models and any(step.with_.get("model") in models for step in load_kit(name, kits_dir)[0].steps):
            touched.add(name)
    return [name for name in names if name in touched]


def escape(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as GitHub reads them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotations(run_dir: Path) -> tuple[list[str], Word]:
    """The workflow commands for one record, and its verdict."""
    manifest = load_manifest(run_dir)
    # a run that was not judged (interrupted, detached) says its status instead
    verdict = load_verdict(run_dir) or Verdict(manifest.status.word, manifest.status_detail or "")
    word = verdict.verdict
    title = f"{manifest.kit_name} on {manifest.host_name}: {word}"
    notes, reasons = shared_reasons(verdict.expectations, manifest.fingerprint, manifest.steps)
    lines = []
    if word == Word.FAIL:
        for j in verdict.expectations:
            if j.status == Word.FAIL:
                lines.append(f"::error title={escape(title)}::{escape(j.name + ': ' + str(reasons.get(j.name, j.reason)))}")
    elif word == Word.INCONCLUSIVE:
        unjudged = [j for j in verdict.expectations if j.status == Word.INCONCLUSIVE]
        body = [f"{verdict.summary}."] + [f"{j.name}: {reasons.get(j.name, j.reason)}" for j in unjudged]
        body += [f"note {n.number}: {n.sentence()}" for n in notes]
        lines.append(f"::warning title={escape(title)}::{escape(chr(10).join(body))}")
    elif word != Word.PASS:
        lines.append(f"::error title={escape(title)}::{escape(str(verdict.summary or manifest.status_detail))}")
    return lines, word
