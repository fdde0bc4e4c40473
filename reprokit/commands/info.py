"""`invoke hosts`, `triage`: what the inventory declares, and what a server log says (nothing is run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.table import Table

from reprokit.commands import tasking
from reprokit.commands.console import console, program_name, warn_inventory
from reprokit.commands.flags import INVENTORY_HELP, JSON_HELP
from reprokit.commands.tasking import task
from reprokit.errors import ConfigError, ExitCode
from reprokit.fix.fit_prediction import predict
from reprokit.hosts.axes import load_inventory
from reprokit.triage import render_explain, render_table, triage_files


def expand_log_paths(specs: list[str]) -> list[Path]:
    """Files as given; directories as their *.log / *.log.gz files; globs expanded. A spec matching nothing is an error."""
    paths: list[Path] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and (p.name.endswith(".log") or p.name.endswith(".log.gz")))
        elif any(ch in spec for ch in "*?["):
            found = sorted(Path().glob(spec)) if not path.is_absolute() else sorted(Path("/").glob(spec.lstrip("/")))
        else:
            found = [path]
        if not found:
            raise ConfigError(f"{spec}: no log files there; give a log file, a directory of *.log files, or a glob")
        paths.extend(found)
    return paths


def triage(specs: list[str], flashinfer: str | None, as_json: bool, explain: bool = False) -> int:
    report = triage_files(expand_log_paths(specs), flashinfer_version=flashinfer, predict=predict)
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
    elif explain:
        console.print(render_explain(report), markup=False)
    else:
        console.print(render_table(report, console.width, program_name()), markup=False, soft_wrap=True)
    return report.exit_code


def list_hosts(inventory_path: str, as_json: bool = False) -> int:
    inventory = load_inventory(inventory_path)
    warn_inventory(inventory)
    loops = {}
    for host in inventory.hosts.values():  # a proxy_jump loop would only surface at connect time: say it here
        try:
            inventory.gateways(host)
        except ConfigError as exc:
            loops.setdefault(str(exc), host.name)
    for problem in loops:
        print(f"warning: {problem}", file=sys.stderr)
    if as_json:
        print(json.dumps({"inventory": inventory_path, "hosts": [host.describe() for host in inventory.hosts.values()],
                          "groups": inventory.groups}, indent=2))
        return ExitCode.PASS
    where = (f"{Path(inventory_path).resolve()}" if Path(inventory_path).exists()
             else f"no {inventory_path} here: only the built-in host 'local'; -i FILE names an inventory")
    table = Table(title=f"hosts ({where})", title_justify="left")
    for column in ("host", "connection", "address", "user", "runtime", "gpu", "groups"):
        table.add_column(column, overflow="fold")
    for host in inventory.hosts.values():
        address = "-" if host.is_local else f"{host.address}:{host.port}"
        gpu = f"{host.gpu_count or '?'} x {host.gpu_arch or '?'}"
        table.add_row(host.name, host.connection, address, host.user or "-", host.runtime, gpu, ", ".join(host.groups))
    console.print(table)
    return ExitCode.PASS


@task(name="triage", positional=["paths"], iterable=["paths", "also"],
      help={"paths": "server logs (plain or .gz), directories of logs, or globs such as 'logs/rank*.log' (one or more)",
            "also": "another log, directory or glob (repeatable; ranks may be separate files)",
            "flashinfer": "FlashInfer version, for the tactic -> tile table (e.g. 0.6.3)",
            "explain": "print the chain behind the verdict: the deciding rule and line, the process, its last record, "
                       "why it is dead or alive", **JSON_HELP})
def triage_task(c, paths, also=None, flashinfer=None, json=False, explain=False):
    """Triage server logs: readiness, autotune failures by tile, fatal errors; exit code per verdict (docs/triage.md)."""
    tasking.call(triage, [*paths, *(also or [])], flashinfer, json, explain)


@task(name="hosts", help={**INVENTORY_HELP, **JSON_HELP})
def hosts_task(c, inventory=None, json=False):
    """List the inventory's hosts (with the built-in 'local'); warns about misspelt reprokit variables."""
    tasking.call(list_hosts, tasking.paths(c, inventory=inventory)["inventory"], as_json=json)


ns = tasking.group("info", "the inventory, and what a server log says", triage_task, hosts_task)
