"""`invoke summary`, `check-record`, `runs`, `compare`: the records of runs, read back; the exit code decided here."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reprokit.commands.console import console
from reprokit.errors import ConfigError, ExitCode
from reprokit.history import list_runs, resolve_run
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
    code = ExitCode.FAIL if problems or manifest["status"] != "complete" else ExitCode.PASS
    if as_json:
        print(json.dumps({"run_dir": run_dir, "status": manifest["status"], "artifacts": len(manifest.get("artifacts") or {}),
                          "problems": problems, "exit_code": int(code)}, indent=2))
        return code
    detail = manifest.get("status_detail")
    console.print(f"{run_dir}: status {manifest['status']}" + (f" ({detail})" if detail else ""), markup=False)
    for problem in problems:
        console.print(f"  {problem}", markup=False)
    if problems:
        console.print(f"{len(problems)} problem(s); the record does not match its manifest", markup=False)
        return ExitCode.FAIL
    console.print(f"all {len(manifest.get('artifacts') or {})} artifacts match their sha256", markup=False)
    return ExitCode.PASS if manifest["status"] == "complete" else ExitCode.FAIL


def runs_command(runs_dir: str, kit: str | None = None, host: str | None = None, verdict: str | None = None,
                 gpu: str | None = None, since: str | None = None, as_json: bool = False, html: str | None = None) -> int:
    """List the runs of a directory; ``html`` also writes the static index of them. 0, or 2 for a bad directory."""
    runs = list_runs(Path(runs_dir), kit=kit, host=host, verdict=verdict, gpu=gpu, since=since)
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
