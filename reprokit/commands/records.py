"""`invoke summary`, `check-record`, `runs`, `compare`: the records of runs, read back; the exit code decided here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.table import Table

from reprokit.commands import tasking
from reprokit.commands.console import console, print_markdown
from reprokit.commands.flags import JSON_HELP
from reprokit.commands.tasking import task
from reprokit.errors import ConfigError, ExitCode
from reprokit.output.hosttext import shown
from reprokit.records.history import list_runs, resolve_run
from reprokit.records.models import RunStatus, Word
from reprokit.records.run_dir import load_manifest, resolve_run_dir, short_run_id, verify_record
from reprokit.report.compare import compare_runs, render_markdown
from reprokit.report.runs_index import write_index

RUNS_WIDE_CHARS = 160
VERDICT_FILTERS = tuple(Word)  # what a record's verdict can read: the judge's words, or how an unjudged run ended


def summary(runs_dir: str, out: str | None, default_runs_dir: str | None = None) -> int:
    """Append the report of every run under ``runs_dir`` (a CI job's summary): verdict first, then its tables.
    ``runs_dir`` may name one run by its id or a part of it (``f199``), looked up in ``default_runs_dir``."""
    root = Path(runs_dir)
    if not root.is_dir() and default_runs_dir:
        root = resolve_run_dir(runs_dir, default_runs_dir)
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
        print_markdown(text)
    return code


def check_record(run_dir: str, as_json: bool = False, runs_dir: str = "runs") -> int:
    run_dir = str(resolve_run_dir(run_dir, runs_dir))  # a path, an id, or a unique part of one
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
    if verdict is not None and verdict.upper() not in VERDICT_FILTERS:
        raise ConfigError(f"--verdict {verdict}: give one of {', '.join(VERDICT_FILTERS)} (upper or lower case)")
    runs = list_runs(Path(runs_dir), kit=kit, host=host, verdict=verdict, gpu=gpu, since=since,
                     warn=lambda line: print(shown(line), file=sys.stderr))
    if html:
        write_index(Path(html), runs)
    if as_json:
        print(json.dumps([r.to_json() for r in runs], indent=2))
        return ExitCode.PASS
    wide = console.width >= RUNS_WIDE_CHARS  # the driver, versions and commit where they fit; always in --json
    columns = ("run", "verdict", "held", "kit", "host", "GPU", "started") + (("driver", "versions", "git") if wide else ())
    table = Table(title=f"{len(runs)} run(s) under {runs_dir}", title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column in ("run", "verdict", "held", "started"))
    for r in runs:  # the run's short id: what every task takes (the full id is in --json and the directory's name)
        row = [short_run_id(r.run_id), r.verdict, f"{r.held}/{r.judged}", r.kit, r.host, r.gpu, r.started[:16]]
        table.add_row(*row, *((r.driver, r.versions, r.git_commit) if wide else ()))
    console.print(table)
    if html:
        console.print(f"index: {html}", markup=False, soft_wrap=True)
    return ExitCode.PASS


def compare_command(run_a: str, run_b: str, runs_dirs: list[str], as_json: bool = False, tolerance_pct: float = 5.0,
                    fail_on_regression: bool = False) -> int:
    """Print what changed from A to B; with ``fail_on_regression``, exit 1 when B regressed (CI gates on it)."""
    if not 0 <= tolerance_pct < 100:
        raise ConfigError(f"--tolerance-pct {tolerance_pct}: give a percentage from 0 to 100, e.g. 5")
    search = [Path(d) for d in runs_dirs]
    diff = compare_runs(resolve_run(run_a, search), resolve_run(run_b, search), tolerance=tolerance_pct / 100)
    if as_json:
        print(json.dumps(diff, indent=2))
    else:
        print_markdown(render_markdown(diff))
    return ExitCode.FAIL if fail_on_regression and diff["regressions"] else ExitCode.PASS


@task(name="summary", help={"runs-dir": "a run record (its directory, id or a unique part of it), or a directory of"
                                        " them (e.g. one CI job's)",
                            "out": "append to this file (e.g. $GITHUB_STEP_SUMMARY) instead of printing"})
def summary_task(c, runs_dir=None, out=None):
    """Print (or append to a file) the report of each run: verdict first, then the tables."""
    tasking.call(summary, tasking.paths(c, runs_dir=runs_dir)["runs_dir"], out, tasking.paths(c)["runs_dir"])


@task(name="check-record", positional=["run_dir"],
      help={"run-dir": "a run record: its directory, its id or a unique part of it (e.g. f199)", **JSON_HELP})
def check_record_task(c, run_dir, json=False):
    """Verify every artifact of a run record against the sha256 in its manifest."""
    tasking.call(check_record, run_dir, as_json=json, runs_dir=tasking.paths(c)["runs_dir"])


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
