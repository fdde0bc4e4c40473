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

import json
import subprocess
from pathlib import Path
from typing import Any

from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ConfigError, ExitCode
from reprokit.history import find_records
from reprokit.records.run import load_manifest
from reprokit.report.reasons import record_reasons

ALL_KITS_PATHS = ("docker/", "inventory.yml")
NO_BASE = "0" * 40  # GitHub's `before` of a push that created the branch


def _git_changed(base: str, head: str, cwd: Path) -> list[str]:
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


def changed_kits_command(base: str | None, head: str, kits_dir: str, kit: str | None = None,
                         github_output: str | None = None) -> int:
    """Print the JSON list of kits to run (``kit`` given: just it); append ``kits=[...]`` to ``$GITHUB_OUTPUT``."""
    kits = Path(kits_dir)
    if kit:
        load_kit(kit, kits)  # an unknown kit is bad input, said now rather than in the matrix job
        selected = [kit]
    elif not base or base == NO_BASE:
        selected = kit_names(kits)
    else:
        selected = changed_kits(_git_changed(base, head, Path.cwd()), kits)
    line = json.dumps(selected)
    print(line)
    if github_output:
        with open(github_output, "a", encoding="utf-8") as fh:
            fh.write(f"kits={line}\n")
    return ExitCode.PASS


def _escape(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as GitHub reads them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotations(run_dir: Path) -> tuple[list[str], str]:
    """The workflow commands for one record, and its verdict."""
    manifest = load_manifest(run_dir)
    try:
        verdict = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        verdict = {"verdict": manifest.get("status", "NO VERDICT").upper(), "summary": manifest.get("status_detail", ""),
                   "expectations": []}
    word = str(verdict.get("verdict"))
    kit, host = (manifest.get("kit") or {}).get("name"), (manifest.get("host") or {}).get("name")
    title = f"{kit} on {host}: {word}"
    expectations: list[dict[str, Any]] = verdict.get("expectations") or []
    notes, reasons = record_reasons(run_dir, expectations)
    lines = []
    if word == "FAIL":
        for j in expectations:
            if j.get("status") == "FAIL":
                lines.append(f"::error title={_escape(title)}::{_escape(j['name'] + ': ' + str(reasons.get(j['name'], j.get('reason'))))}")
    elif word == "INCONCLUSIVE":
        unjudged = [j for j in expectations if j.get("status") == "INCONCLUSIVE"]
        body = [f"{verdict.get('summary', '')}."] + [f"{j['name']}: {reasons.get(j['name'], j.get('reason'))}" for j in unjudged]
        body += [f"note {n.number}: {n.sentence()}" for n in notes]
        lines.append(f"::warning title={_escape(title)}::{_escape(chr(10).join(body))}")
    elif word != "PASS":
        lines.append(f"::error title={_escape(title)}::{_escape(str(verdict.get('summary') or manifest.get('status_detail')))}")
    return lines, word


def ci_verdict_command(runs_dir: str, inconclusive_fails: bool = False) -> int:
    """Annotate every record under ``runs_dir`` and give the job's exit code (see the module docstring)."""
    root = Path(runs_dir)
    records = find_records(root) if root.is_dir() else []
    if not records:
        print(f"::error title=no run record::nothing was recorded under {_escape(runs_dir)}: the run stopped before it "
              "started (see the Reproduce step's log)")
        return ExitCode.FAIL
    worst = ExitCode.PASS
    for run_dir in records:
        lines, word = annotations(run_dir)
        for line in lines:
            print(line)
        if word == "FAIL" or word not in ("PASS", "INCONCLUSIVE") or (word == "INCONCLUSIVE" and inconclusive_fails):
            worst = ExitCode.FAIL
        manifest = load_manifest(run_dir)
        if any(s.get("status") in ("timeout", "error", "bad_params") for s in manifest.get("steps") or []):
            worst = ExitCode.FAIL
    return worst
