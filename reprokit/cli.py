"""What the Invoke tasks do, as plain functions (``tasks.py`` only wires them).

Every function returns an exit code from ``reprokit.errors.ExitCode`` and
raises ``ReprokitError`` for input it cannot use; ``tasks.py`` turns both
into ``invoke.Exit``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reprokit.config.inventory import load_inventory
from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ExitCode
from reprokit.records.run import load_manifest, verify_record
from reprokit.runner import run_kit, step_kinds_table

def _console(stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    # Logs and CI have no terminal: rich would wrap tables at 80 columns there.
    return Console(stderr=stderr, highlight=False, width=None if probe.is_terminal else 140)


console = _console(stderr=False)
err_console = _console(stderr=True)

VERDICT_STYLE = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow", "INTERRUPTED": "bold red"}


def repro(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, runs_dir: str, as_json: bool = False,
          quiet: bool = False) -> int:
    kits = Path(kits_dir)
    kit, kit_path = load_kit(kit_name, kits)
    host = load_inventory(inventory_path).host(host_name)

    def say(message: str) -> None:
        if not as_json:
            err_console.print(message, markup=False)

    def stream(line: str) -> None:
        if not (as_json or quiet):
            err_console.print(f"      | {line}", style="dim", markup=False)

    outcome = run_kit(kit, kit_path, host, Path(runs_dir), kits, say=say, stream=stream)
    verdict = outcome.verdict
    if as_json:
        print(json.dumps({"run_dir": str(outcome.run_dir), "exit_code": int(outcome.exit_code), **verdict}, indent=2))
        return outcome.exit_code
    if verdict.get("expectations"):
        table = Table(title=f"{kit.kit} on {host.name}", title_justify="left")
        for column in ("expectation", "status", "observed", "reason"):
            table.add_column(column, overflow="fold")
        for j in verdict["expectations"]:
            observed = json.dumps(j["observed"]) if j["observed"] is not None else ""
            table.add_row(j["name"], j["status"], observed[:80], j["reason"])
        console.print(table)
    style = VERDICT_STYLE.get(verdict["verdict"], "bold")
    console.print(f"[{style}]{verdict['verdict']}[/]: {verdict.get('summary', '')}")
    console.print(f"record: {outcome.run_dir}  (report: {outcome.run_dir / 'report.md'})", markup=False)
    return outcome.exit_code


def list_kits(kits_dir: str) -> int:
    table = Table(title="kits", title_justify="left")
    for column in ("kit", "steps", "pins"):
        table.add_column(column, overflow="fold")
    for name in kit_names(Path(kits_dir)):
        kit, _ = load_kit(name, kits_dir)
        table.add_row(name, ", ".join(f"{s.name}" for s in kit.steps), ", ".join(f"{k} {v}" for k, v in kit.pins.items()))
    console.print(table)
    steps = Table(title="step kinds", title_justify="left")
    for column in ("kind", "runs on", "implemented", "what it does"):
        steps.add_column(column, overflow="fold")
    for row in step_kinds_table():
        steps.add_row(*row)
    console.print(steps)
    return ExitCode.PASS


def list_hosts(inventory_path: str) -> int:
    inventory = load_inventory(inventory_path)
    table = Table(title=f"hosts ({inventory_path})", title_justify="left")
    for column in ("host", "connection", "address", "user", "runtime", "gpu", "groups"):
        table.add_column(column, overflow="fold")
    for host in inventory.hosts.values():
        address = f"{host.address}:{host.port}" if host.connection == "ssh" else "-"
        gpu = "cpu-only" if host.cpu_only else f"{host.gpu_count or '?'} x {host.gpu_arch or '?'}"
        table.add_row(host.name, host.connection, address, host.user or "-", host.runtime, gpu, ", ".join(host.groups))
    console.print(table)
    return ExitCode.PASS


def check_record(run_dir: str) -> int:
    manifest = load_manifest(run_dir)
    problems = verify_record(run_dir)
    detail = manifest.get("status_detail")
    console.print(f"{run_dir}: status {manifest['status']}" + (f" ({detail})" if detail else ""), markup=False)
    for problem in problems:
        console.print(f"  {problem}", markup=False)
    if problems:
        console.print(f"{len(problems)} problem(s); the record does not match its manifest", markup=False)
        return ExitCode.FAIL
    console.print(f"all {len(manifest.get('artifacts') or {})} artifacts match their sha256", markup=False)
    return ExitCode.PASS if manifest["status"] == "complete" else ExitCode.FAIL


def print_error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
