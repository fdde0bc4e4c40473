"""`invoke kits`, `hosts`, `triage`: what the kits and the inventory declare, and what a server log says."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from reprokit.commands.console import console, warn_inventory
from reprokit.config.inventory import load_inventory
from reprokit.config.kit import kit_names, load_kit
from reprokit.errors import ConfigError, ExitCode
from reprokit.runner import step_kinds_table
from reprokit.triage import render_table, triage_files


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


def triage(specs: list[str], flashinfer: str | None, as_json: bool) -> int:
    report = triage_files(expand_log_paths(specs), flashinfer_version=flashinfer)
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        console.print(render_table(report), markup=False)
    return report.exit_code


def list_kits(kits_dir: str, as_json: bool = False) -> int:
    if as_json:
        loaded = [load_kit(name, kits_dir)[0] for name in kit_names(Path(kits_dir))]
        print(json.dumps({"kits": [{"kit": k.kit, "steps": [{"name": s.name, "uses": s.uses} for s in k.steps],
                                    "pins": dict(k.pins)} for k in loaded],
                          "step_kinds": [dict(zip(("kind", "runs_on", "implemented", "summary"), row))
                                         for row in step_kinds_table()]}, indent=2))
        return ExitCode.PASS
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


def list_hosts(inventory_path: str, as_json: bool = False) -> int:
    inventory = load_inventory(inventory_path)
    warn_inventory(inventory)
    if as_json:
        print(json.dumps({"inventory": inventory_path, "hosts": [host.describe() for host in inventory.hosts.values()],
                          "groups": inventory.groups}, indent=2))
        return ExitCode.PASS
    table = Table(title=f"hosts ({inventory_path})", title_justify="left")
    for column in ("host", "connection", "address", "user", "runtime", "gpu", "groups"):
        table.add_column(column, overflow="fold")
    for host in inventory.hosts.values():
        address = f"{host.address}:{host.port}" if host.connection == "ssh" else "-"
        gpu = "cpu-only" if host.cpu_only else f"{host.gpu_count or '?'} x {host.gpu_arch or '?'}"
        table.add_row(host.name, host.connection, address, host.user or "-", host.runtime, gpu, ", ".join(host.groups))
    console.print(table)
    return ExitCode.PASS
