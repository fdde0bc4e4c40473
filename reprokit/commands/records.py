"""`invoke summary`, `check-record`, `runs`, `compare`: the records of runs, read back; the exit code decided here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reprokit.commands import tasking
from reprokit.commands.console import console
from reprokit.commands.flags import JSON_HELP
from reprokit.commands.tasking import task
from reprokit.errors import ConfigError, ExitCode
from reprokit.history import list_runs, resolve_run
from reprokit.hosttext import shown
from reprokit.records.models import RunStatus
from reprokit.records.run import load_manifest, verify_record
from reprokit.report.compare import compare_runs, render_markdown
from reprokit.report.runs_index import write_index


def summary(runs_dir: str, out: str | None) -> int:
    """Append the report of every run under ``runs_dir`` (a CI job's summary): verdict first, then its tables."""
    root = Path(runs_dir)
    reports = sorted(root.glob("*/report.md")) if root.is_dir() else []
    if (root / "report.md").is_file():
        reports = [root / "report.md"]
    if not reports:
        text = f"# No run record\n\nNothing was recorded under `{runs_dir}`: the run stopped before it started (see the job log).\n"
        code = ExitCode.FAIL
    else:
        text = "\n\n".join(path.read_text() for path in reports)
        code = ExitCode.PASS
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return code


def check_record(run_dir: str, as_json: bool = False) -> int:
    manifest = load_manifest(run_dir)
    problems = verify_record(run_dir)
    code = ExitCode.FAIL if problems or manifest.status != RunStatus.COMPLETE else ExitCode.PASS
    if as_json:
        print(json.dumps({"run_dir": run_dir, "status": manifest.status, "artifacts": len(manifest.artifacts),
                          "problems": problems, "exit_code": int(code)}, indent=2))
        return code
    detail = manifest.status_detail
    console.print(f"{run_dir}: status {manifest.status}" + (f" ({detail})" if detail else ""), markup=False)
    for problem in problems:
        console.print(f"  {problem}", markup=False)
    if problems:
        console.print(f"{len(problems)} problem(s); the record does not match its manifest", markup=False)
        return ExitCode.FAIL
    console.print(f"all {len(manifest.artifacts)} artifacts match their sha256", markup=False)
    return ExitCode.PASS if manifest.status == RunStatus.COMPLETE else ExitCode.FAIL


def runs_command(runs_dir: str, kit: str | None = None, host: str | None = None, verdict: str | None = None,
                 gpu: str | None = None, since: str | None = None, as_json: bool = False, html: str | None = None) -> int:
    """List the runs of a directory; ``html`` also writes the static index of them. 0, or 2 for a bad directory."""
    runs = list_runs(Path(runs_dir), kit=kit, host=host, verdict=verdict, gpu=gpu, since=since,
                     warn=lambda line: print(shown(line), file=sys.stderr))
    if html:
        write_index(Path(html), runs)
    if as_json:
        print(json.dumps([r.to_json() for r in runs], indent=2))
        return ExitCode.PASS
    console = Console(highlight=False, width=None if Console().is_terminal else 200)
    table = Table(title=f"{len(runs)} run(s) under {runs_dir}", title_justify="left")
    for column in ("run", "verdict", "held", "kit", "host", "GPU", "driver", "versions", "started", "git"):
        table.add_column(column, overflow="fold")
    for r in runs:
        table.add_row(r.run_id, r.verdict, f"{r.held}/{r.judged}", r.kit, r.host, r.gpu, r.driver, r.versions, r.started,
                      r.git_commit)
    console.print(table)
    if html:
        console.print(f"index: {html}", markup=False)
    return ExitCode.PASS


def compare_command(run_a: str, run_b: str, runs_dirs: list[str], as_json: bool = False, tolerance_pct: float = 5.0,
                    fail_on_regression: bool = False) -> int:
    """Print what changed from A to B; with ``fail_on_regression``, exit 1 when B regressed (CI gates on it)."""
    if not 0 <= tolerance_pct < 100:
        raise ConfigError(f"--tolerance-pct {tolerance_pct}: give a percentage from 0 to 100, e.g. 5")
    search = [Path(d) for d in runs_dirs]
    diff = compare_runs(resolve_run(run_a, search), resolve_run(run_b, search), tolerance=tolerance_pct / 100)
    print(json.dumps(diff, indent=2) if as_json else render_markdown(diff), end="\n" if as_json else "")
    return ExitCode.FAIL if fail_on_regression and diff["regressions"] else ExitCode.PASS


@task(name="summary", help={"runs-dir": "a run record, or a directory of them (e.g. one CI job's)",
                            "out": "append to this file (e.g. $GITHUB_STEP_SUMMARY) instead of printing"})
def summary_task(c, runs_dir=None, out=None):
    """Print (or append to a file) the report of each run: verdict first, then the tables."""
    tasking.call(summary, tasking.paths(c, runs_dir=runs_dir)["runs_dir"], out)


@task(name="check-record", positional=["run_dir"], help={"run-dir": "a run record directory, runs/<id>", **JSON_HELP})
def check_record_task(c, run_dir, json=False):
    """Verify every artifact of a run record against the sha256 in its manifest."""
    tasking.call(check_record, run_dir, as_json=json)


@task(name="runs", help={"runs-dir": "directory of run records (default: config reprokit.runs_dir); e.g. evidence",
                         "kit": "only runs of this kit", "host": "only runs on this host",
                         "verdict": "only PASS, FAIL or INCONCLUSIVE",
                         "gpu": "only runs whose GPU name or arch contains this (e.g. H200, sm120)",
                         "since": "only runs started at or after this UTC time (e.g. 2026-11-29)",
                         "html": "also write a self-contained index of these runs, with a trend per kit and host, to"
                                 " this file", **JSON_HELP})
def runs_task(c, runs_dir=None, kit=None, host=None, verdict=None, gpu=None, since=None, html=None, json=False):
    """The runs of a directory: verdict, kit, host, GPU, versions, when, git commit; filters; an HTML index."""
    tasking.call(runs_command, tasking.paths(c, runs_dir=runs_dir)["runs_dir"], kit=kit, host=host, verdict=verdict,
                 gpu=gpu, since=since, as_json=json, html=html)


@task(name="compare", positional=["run_a", "run_b"], iterable=["runs_dir"],
      help={"run-a": "first run: its id (or a unique part of it) or its directory", "run-b": "second run, the same way",
            "runs-dir": "where to look the ids up (repeatable; default: config reprokit.runs_dir, and evidence)",
            "tolerance-pct": "a figure this much worse than A's is a regression (default 5)",
            "fail-on-regression": "exit 1 when B regressed (for CI)", **JSON_HELP})
def compare_task(c, run_a, run_b, runs_dir=None, tolerance_pct=5.0, fail_on_regression=False, json=False):
    """What changed from A to B: environment, pins, verdict, expectations, tiles, sweep, triage, serving; regressions."""
    dirs = list(runs_dir or []) or [tasking.paths(c)["runs_dir"], "evidence"]
    tasking.call(compare_command, run_a, run_b, dirs, as_json=json, tolerance_pct=float(tolerance_pct),
                 fail_on_regression=fail_on_regression)


ns = tasking.group("records", "the records of runs, read back", summary_task, check_record_task, runs_task, compare_task)
