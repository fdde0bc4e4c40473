"""Front ends of a running run: ``status``, ``logs RUN [-f]``, ``cancel RUN`` (``reprokit/run/in_flight.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from reprokit.commands import tasking
from reprokit.commands.console import cell, console, printers
from reprokit.commands.flags import INVENTORY_HELP, JSON_HELP, SSH_HELP
from reprokit.commands.run import connect_options
from reprokit.commands.tasking import task
from reprokit.errors import ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions
from reprokit.output.hosttext import shown
from reprokit.records.models import RunStatus
from reprokit.records.run_dir import resolve_run_dir
from reprokit.run.in_flight import cancel_run, describe, follow_log, runs_in_flight

RUN_DIR_HELP = "the run: runs/<id> or its id"
RUNS_DIR_HELP = {"runs-dir": "where run records are (default: config reprokit.runs_dir)"}


def status(inventory_path: str, runs_dir: str, options: ConnectOptions, as_json: bool = False) -> int:
    """The runs with a step in flight or left on their host, each as its launcher sees it now."""
    inventory = load_inventory(inventory_path)
    rows = [describe(run_dir, manifest, inventory, options) for run_dir, manifest in runs_in_flight(Path(runs_dir))]
    if as_json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
        return ExitCode.PASS
    if not rows:
        console.print(f"no run in flight or left on a host in {runs_dir}", markup=False)
        return ExitCode.PASS
    table = Table(title=f"runs in flight or on their hosts ({len(rows)})", title_justify="left")
    for column in ("run", "status", "host", "step", "launcher", "job id", "now"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r.run_id, str(r.status), r.host, r.step, r.launcher, r.job_id or "-", cell(r.state))
    console.print(table)
    return ExitCode.PASS


def logs(run_dir: str, inventory_path: str, runs_dir: str, options: ConnectOptions, follow: bool = False) -> int:
    """The step's log from the host, as it is now (``follow``: until the step ends)."""
    path = resolve_run_dir(run_dir, runs_dir)
    end = follow_log(path, load_inventory(inventory_path), options, lambda line: print(shown(line), flush=True), follow)
    return ExitCode.PASS if end is None or end.exit_code == 0 else ExitCode.STEP_ERROR


def cancel(run_dir: str, inventory_path: str, runs_dir: str, options: ConnectOptions, as_json: bool = False) -> int:
    say, _ = printers(as_json)
    path = resolve_run_dir(run_dir, runs_dir)
    detail = cancel_run(path, load_inventory(inventory_path), options, say)
    if as_json:
        print(json.dumps({"run_dir": str(path), "status": RunStatus.KILLED, "status_detail": detail,
                          "exit_code": int(ExitCode.PASS)}, indent=2))
    else:
        console.print(f"{path.name}: {detail}", markup=False)
    return ExitCode.PASS


@task(name="status", help={**RUNS_DIR_HELP, **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def status_task(c, inventory=None, runs_dir=None, json=False, known_hosts=None, accept_new_host_key=False,
                ssh_config=None):
    """List the runs in flight or left on their hosts: step, host, launcher, job id, and whether it still runs."""
    tasking.no_dry(c, "status")
    given = tasking.paths(c, inventory=inventory, runs_dir=runs_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(lambda: status(given["inventory"], given["runs_dir"], connect_options(given, accept_new_host_key),
                                as_json=json))


@task(name="logs", positional=["run_dir"],
      help={"run-dir": RUN_DIR_HELP, "follow": "keep printing until the step ends", **RUNS_DIR_HELP, **INVENTORY_HELP,
            **SSH_HELP})
def logs_task(c, run_dir, follow=False, inventory=None, runs_dir=None, known_hosts=None, accept_new_host_key=False,
              ssh_config=None):
    """Print the log of a run's step from its host (-f: follow it to its end)."""
    tasking.no_dry(c, "logs")
    given = tasking.paths(c, inventory=inventory, runs_dir=runs_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(lambda: logs(run_dir, given["inventory"], given["runs_dir"], connect_options(given, accept_new_host_key),
                              follow=follow))


@task(name="cancel", positional=["run_dir"], help={"run-dir": RUN_DIR_HELP, **RUNS_DIR_HELP, **INVENTORY_HELP,
                                                   **JSON_HELP, **SSH_HELP})
def cancel_task(c, run_dir, inventory=None, runs_dir=None, json=False, known_hosts=None, accept_new_host_key=False,
                ssh_config=None):
    """Stop a run and its step on the host; what it wrote stays there and the record says killed (then `collect`)."""
    tasking.no_dry(c, "cancel")
    given = tasking.paths(c, inventory=inventory, runs_dir=runs_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(lambda: cancel(run_dir, given["inventory"], given["runs_dir"], connect_options(given, accept_new_host_key),
                                as_json=json))


ns = tasking.group("operate", "runs in flight: watch and stop them", status_task, logs_task, cancel_task)
