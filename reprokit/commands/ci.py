"""`invoke changed-kits`, `ci-verdict`: the GitOps workflow's steps (``.github/workflows/repro.yml`` calls them).

What they read and decide is ``reprokit.report.ci``'s; here they print and give the job's exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ExitCode
from reprokit.history import find_records
from reprokit.records.run import load_manifest
from reprokit.report.ci import NO_BASE, annotations, changed_kits, escape, git_changed


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
        selected = changed_kits(git_changed(base, head, Path.cwd()), kits)
    line = json.dumps(selected)
    print(line)
    if github_output:
        with open(github_output, "a", encoding="utf-8") as fh:
            fh.write(f"kits={line}\n")
    return ExitCode.PASS


def ci_verdict_command(runs_dir: str, inconclusive_fails: bool = False) -> int:
    """Annotate every record under ``runs_dir`` and give the job's exit code (see the module docstring)."""
    root = Path(runs_dir)
    records = find_records(root) if root.is_dir() else []
    if not records:
        print(f"::error title=no run record::nothing was recorded under {escape(runs_dir)}: the run stopped before it "
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
