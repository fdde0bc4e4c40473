"""`invoke changed-kits`, `ci-verdict`: the GitOps workflow's steps (``.github/workflows/repro.yml`` calls them).

What they read and decide is ``reprokit.report.ci``'s; here they print and give the job's exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.commands import tasking
from reprokit.commands.flags import KITS_DIR_HELP
from reprokit.commands.tasking import task
from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ExitCode
from reprokit.records.history import find_records
from reprokit.records.models import Word
from reprokit.records.run_dir import load_manifest
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
        if word not in (Word.PASS, Word.INCONCLUSIVE) or (word == Word.INCONCLUSIVE and inconclusive_fails):
            worst = ExitCode.FAIL
        manifest = load_manifest(run_dir)
        if any(s.status.is_error for s in manifest.steps):
            worst = ExitCode.FAIL
    return worst


@task(name="changed-kits",
      help={"base": "commit before the push (github.event.before); none or all zeros: every kit",
            "head": "commit after the push (default HEAD)", "kit": "just this kit (a workflow_dispatch input)",
            "kits-dir": KITS_DIR_HELP, "github-output": "append kits=[...] to this file ($GITHUB_OUTPUT)"})
def changed_kits_task(c, base=None, head="HEAD", kit=None, kits_dir=None, github_output=None):
    """The kits a push changed, as a JSON list (a kit file, a model it uses; docker/ or inventory.yml: every kit)."""
    tasking.call(changed_kits_command, base, head, tasking.paths(c, kits_dir=kits_dir)["kits_dir"], kit=kit,
                 github_output=github_output)


@task(name="ci-verdict", help={"runs-dir": "the CI job's run records", "inconclusive-fails": "INCONCLUSIVE fails the job too"})
def ci_verdict_task(c, runs_dir=None, inconclusive_fails=False):
    """GitHub annotations for each run (FAIL: errors; INCONCLUSIVE: a warning with its reasons) and the job's status."""
    tasking.call(ci_verdict_command, tasking.paths(c, runs_dir=runs_dir)["runs_dir"], inconclusive_fails=inconclusive_fails)


ns = tasking.group("ci", "the GitOps workflow's steps", changed_kits_task, ci_verdict_task)
tasking.for_developers(changed_kits_task, ci_verdict_task)
