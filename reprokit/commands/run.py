"""`invoke repro`, `probe`, `sweep`, `collect`, `unlock`: kit runs on hosts; the front ends, their tasks, their group.

Every front end returns an exit code from ``reprokit.errors.ExitCode`` and raises ``ReprokitError`` for input it
cannot use; its task hands both to ``tasking.call``, which turns them into ``invoke.Exit``.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.table import Table
from rich.text import Text

from reprokit.commands import tasking
from reprokit.commands.console import (
    VERDICT_STYLE,
    as_typed,
    cell,
    console,
    err_console,
    printers,
    transfer_progress,
    warn_inventory,
)
from reprokit.commands.flags import INVENTORY_HELP, JSON_HELP, RUN_HELP, SSH_HELP
from reprokit.commands.tasking import task
from reprokit.config import ansible_inventory, layers
from reprokit.config.kit import Describes, apply_overrides, load_kit, select_steps
from reprokit.errors import ConfigError, ExitCode, ReprokitError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, executor_for, node_hosts
from reprokit.hosts.host_lock import break_lock
from reprokit.hosts.launch import STOP
from reprokit.output.hosttext import shown
from reprokit.records.models import RunStatus, Word
from reprokit.records.run_dir import load_manifest, load_steps, resolve_run_dir, short_run_id
from reprokit.report.headline import headline
from reprokit.report.judge import plain
from reprokit.report.markdown import shorten
from reprokit.report.reasons import record_reasons
from reprokit.run.collect import collect_run, prune_run
from reprokit.run.dry_run import describe_plan, render_plan
from reprokit.run.kit_run import RunOutcome, run_kit


def parse_images(specs: list[str] | None) -> dict[str, str]:
    images: dict[str, str] = {}
    for spec in specs or []:
        name, sep, ref = spec.partition("=")
        if not sep or not name or not ref:
            raise ConfigError(f"--image {spec!r}: write NAME=REFERENCE, e.g. --image workload=registry.local/reprokit/workload@sha256:...")
        images[name] = ref
    return images


def pull_limits(max_pull_bytes: str | int | None) -> dict[str, int]:
    """``--max-pull-bytes N`` (plain bytes, or with a K/M/G/T suffix) as ConnectOptions fields."""
    if max_pull_bytes is None:
        return {}
    text = str(max_pull_bytes).strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) <= 0:
        raise ConfigError(f"--max-pull-bytes {max_pull_bytes!r}: give a positive size such as 500M or 64G")
    return {"max_pull_bytes": int(digits) * scale}


def io_timeout(value: str | float | None) -> dict[str, float]:
    """``reprokit.io_timeout_s`` (``INVOKE_REPROKIT_IO_TIMEOUT_S``): how long a silent host or Slurm tool is given per
    read before its link counts as dead. A site whose controller is slow to answer raises it; a test rig lowers it."""
    if value is None:
        return {}
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = 0.0
    if not 1.0 <= seconds <= 3600.0:
        raise ConfigError(f"reprokit.io_timeout_s {value!r}: give a number of seconds from 1 to 3600, such as 30")
    return {"io_timeout_s": seconds}


def connect_options(paths: dict, accept_new_host_key: bool, image: list[str] | None = None, keep_remote: bool = False,
                    max_pull_bytes: str | None = None) -> ConnectOptions:
    """The flags of a task that reaches a host, as ``ConnectOptions``; a bad flag is a one-line error (exit 2)."""
    limits = pull_limits(max_pull_bytes if max_pull_bytes is not None else paths.get("max_pull_bytes"))
    files = paths.get("max_pull_files")
    if files is not None:
        if not str(files).strip().isdigit() or int(files) <= 0:
            raise ConfigError(f"reprokit.max_pull_files {files!r}: give a positive number of files such as 100000")
        limits["max_pull_files"] = int(files)
    limits.update(io_timeout(paths.get("io_timeout_s")))
    return ConnectOptions(known_hosts=Path(paths["known_hosts"]), accept_new_host_key=accept_new_host_key,
                          images=parse_images(image), keep_remote=keep_remote, ssh_config=paths["ssh_config"], **limits)


EXIT_BY_VERDICT = {Word.PASS: ExitCode.PASS, Word.FAIL: ExitCode.FAIL, Word.INCONCLUSIVE: ExitCode.INCONCLUSIVE}


def run_exit_code(outcome: RunOutcome) -> ExitCode:
    """A run's exit code: its verdict's, STEP_ERROR for a judged run with a failed step (unless it FAILed anyway),
    HOST_ERROR when the host keeps the step's files (`invoke collect`), INTERRUPTED on Ctrl-C or SIGTERM."""
    if outcome.ended == RunStatus.INTERRUPTED:
        return ExitCode.INTERRUPTED
    if outcome.ended == "host_kept":
        return ExitCode.HOST_ERROR
    code = EXIT_BY_VERDICT[outcome.verdict.verdict]
    return ExitCode.STEP_ERROR if outcome.step_errors and code != ExitCode.FAIL else code


def _print_verdict(kit_name: str, host_name: str, outcome: RunOutcome) -> None:
    """The expectations at the terminal's width, then the headline: what happened in words with the exit code, the
    root cause the steps found, the next step, where the record is."""
    verdict = outcome.verdict
    if verdict.expectations:
        table = Table(title=f"{kit_name} on {host_name}", title_justify="left")
        for column in ("expectation", "status", "observed", "reason"):
            table.add_column(column, overflow="fold")
        notes, reasons = record_reasons(outcome.run_dir)  # a shared reason is said once
        for j in verdict.expectations:
            observed = plain(j.observed) if j.observed is not None else ""
            table.add_row(cell(j.name), cell(j.status), cell(shorten(observed, 80)), cell(reasons.get(j.name, j.reason)))
        console.print(table)
        for note in notes:
            console.print(f"note {note.number}: {shown(note.sentence())}", markup=False)  # a result.json's `error`
    said = headline(verdict, load_steps(outcome.run_dir))
    code = run_exit_code(outcome)
    style = VERDICT_STYLE.get(verdict.verdict, "bold")
    console.print(Text.assemble((said.words, style), f" ({verdict.verdict}, exit {int(code)})"), soft_wrap=True)
    for line in said.lines()[1:]:
        console.print(shown(line), markup=False, soft_wrap=True)
    step = run_next_step(kit_name, outcome, code)
    if step:
        console.print(f"next: {as_typed(step)}", markup=False, soft_wrap=True)
    console.print(f"record: {outcome.run_dir} (run id {short_run_id(outcome.run_dir.name)})", markup=False,
                  soft_wrap=True)
    if (outcome.run_dir / "report.html").exists():  # an interrupted or detached run has none yet
        console.print(f"report: {outcome.run_dir / 'report.html'}", markup=False, soft_wrap=True)


def run_next_step(kit_name: str, outcome: RunOutcome, code: ExitCode) -> str | None:
    """What to do after this run, as a command: the workaround and the bug report once it reproduced (or once a
    healthy stack's expectations failed); a host with the GPU when this one could not tell; the record's report when
    it did not reproduce; a comparison with another run when the fix or the stack held."""
    run = short_run_id(outcome.run_dir.name)
    describes = outcome.verdict.describes
    if code == ExitCode.PASS and describes in (Describes.FIX, Describes.HEALTH):
        return f"`invoke compare {run} OTHER_RUN` shows what differs from another run of the kit (one that failed)"
    if code == ExitCode.FAIL and describes == Describes.HEALTH:
        return (f"`invoke summary -r {run}` shows what did not hold; `invoke report --upstream {run}` drafts the bug"
                f" report")
    if code == ExitCode.PASS:
        return f"`invoke fix --kit {kit_name}` (the workaround), `invoke report --upstream {run}` (the bug report)"
    if code == ExitCode.INCONCLUSIVE:
        return (f"run it where the kit's GPU is: `invoke repro {kit_name} -H HOST` (`invoke hosts` lists the inventory);"
                f" `invoke summary -r {run}` shows this run's findings")
    if code == ExitCode.FAIL:
        return f"`invoke summary -r {run}` shows what did not hold; `invoke compare {run} OTHER_RUN` what changed"
    if code == ExitCode.STEP_ERROR:
        return f"a step failed outside its contract: its log is in the record (`invoke summary -r {run}` names it)"
    if code in (ExitCode.HOST_ERROR, ExitCode.INTERRUPTED):
        return f"`invoke collect {run}` brings the run back once the host answers"
    return None


def repro(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, runs_dir: str, as_json: bool = False,
          group: str | None = None, options: ConnectOptions | None = None, only: list[str] | None = None,
          skip: list[str] | None = None, sets: list[str] | None = None, dry: bool = False, limit: str | None = None,
          nodes: int | None = None) -> int:
    """Run a kit on a host, a group or the hosts of an Ansible pattern (``limit``); ``only``/``skip``/``sets`` select
    steps and override parameters (recorded); ``dry`` only shows the plan."""
    kits = layers.kit_path(kits_dir)
    kit, kit_path = load_kit(kit_name, kits)
    kit = select_steps(kit, only or [], skip or [])
    kit, overrides = apply_overrides(kit, sets or [])
    selection = {"only": list(only or []), "skip": list(skip or []), "set": overrides}
    inventory = load_inventory(inventory_path)
    warn_inventory(inventory)
    options = options or ConnectOptions()
    given = [flag for flag, value in (("--host", host_name), ("--group", group), ("--limit", limit)) if value]
    if len(given) > 1:
        raise ConfigError(f"give one of --host, --group or --limit, not {' and '.join(given)}")
    if limit:
        hosts = [inventory.host(name) for name in ansible_inventory.match(Path(inventory_path), limit)]
    else:
        hosts = inventory.group(group) if group else [inventory.host(host_name)]
    if nodes is not None:
        if nodes < 1 or group or limit:
            raise ConfigError("--nodes N takes a count of 1 or more, with --host of a Slurm host")
        hosts = node_hosts(hosts[0], inventory, options, nodes)
    if dry:
        plan = describe_plan(kit, kit_path, hosts, Path(runs_dir), options, selection, inventory, kits)
        print(json.dumps(plan, indent=2) if as_json else render_plan(plan))
        return ExitCode.PASS
    if options.progress is None and not (group or limit):
        options.progress = transfer_progress
    if group or limit or nodes:
        return _fan_out(kit, kit_path, hosts, inventory, Path(runs_dir), kits, as_json, options, selection)
    host = hosts[0]
    say, stream = printers(as_json)
    outcome = run_kit(kit, kit_path, host, Path(runs_dir), kits, say=say, stream=stream, inventory=inventory,
                      options=options, selection=selection)
    if as_json:
        print(json.dumps({"run_dir": str(outcome.run_dir), "exit_code": int(run_exit_code(outcome)), **outcome.to_json()}, indent=2))
    else:
        _print_verdict(kit.kit, host.name, outcome)
    return run_exit_code(outcome)


def _fan_out(kit, kit_path, hosts, inventory, runs_dir: Path, kits: Path, as_json: bool,
             options: ConnectOptions, selection: dict | None = None) -> int:
    """Run the kit on every host of a group in parallel; one bad host does not stop the others."""

    def one(host):
        say, stream = printers(as_json, prefix=f"[{host.name}] ")
        try:
            outcome = run_kit(kit, kit_path, host, runs_dir, kits, say=say, stream=stream, inventory=inventory,
                              options=options, selection=selection)
            return host.name, int(run_exit_code(outcome)), outcome.verdict.verdict, str(outcome.run_dir), ""
        except ReprokitError as exc:
            return host.name, int(exc.exit_code), "ERROR", "", str(exc)

    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool, stop_on_signals():
        rows = list(pool.map(one, hosts))
    if as_json:
        print(json.dumps([dict(zip(("host", "exit_code", "verdict", "run_dir", "error"), r)) for r in rows], indent=2))
    else:
        table = Table(title=f"{kit.kit} on {len(hosts)} hosts", title_justify="left")
        for column in ("host", "verdict", "exit", "record / error"):
            table.add_column(column, overflow="fold")
        for name, code, verdict, run_dir, error in rows:
            table.add_row(name, verdict, str(code), cell(run_dir or error))
        console.print(table)
    return max((r[1] for r in rows), key=_severity, default=0)


@contextlib.contextmanager
def stop_on_signals():
    """Ctrl-C and SIGTERM reach only the main thread: tell every host's executor to end its step like a single run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame) -> None:
        STOP.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        STOP.clear()


def _severity(code: int) -> int:
    """Which exit code a fan-out reports: a failure beats a host error beats inconclusive beats a pass."""
    order = [ExitCode.PASS, ExitCode.INCONCLUSIVE, ExitCode.STEP_ERROR, ExitCode.HOST_ERROR, ExitCode.FAIL, ExitCode.INTERRUPTED]
    return order.index(code) if code in order else len(order)


def collect(run_dir: str, inventory_path: str, kits_dir: str, options: ConnectOptions, wait_s: float,
            as_json: bool = False, runs_dir: str = "runs", prune: bool = False, force: bool = False) -> int:
    say, _ = printers(as_json)
    run_dir = str(resolve_run_dir(run_dir, runs_dir))  # runs/<id>, or just <id>
    if prune:
        kept = prune_run(Path(run_dir), load_inventory(inventory_path), options, say=say, wait_s=wait_s)
        if as_json:
            print(json.dumps({"run_dir": run_dir, "pruned": kept, "exit_code": int(ExitCode.PASS)}, indent=2))
        return ExitCode.PASS
    outcome = collect_run(Path(run_dir), load_inventory(inventory_path), options, layers.kit_path(kits_dir), say=say,
                          wait_s=wait_s, force=force)
    manifest = load_manifest(run_dir)
    if as_json:
        print(json.dumps({"run_dir": str(outcome.run_dir), "exit_code": int(run_exit_code(outcome)), **outcome.to_json()}, indent=2))
    else:
        _print_verdict(manifest.kit_name, manifest.host_name, outcome)
    return run_exit_code(outcome)


def unlock(host_name: str, inventory_path: str, runs_dir: str, options: ConnectOptions, as_json: bool = False,
           force: bool = False) -> int:
    inventory = load_inventory(inventory_path)
    host = inventory.host(host_name)
    said: list[str] = []
    say = said.append if as_json else lambda message: err_console.print(message, markup=False)  # its result
    executor = executor_for(host, inventory, Path(runs_dir), options, say)
    executor.connect()
    try:
        break_lock(executor.host_lock(run_id=""), say, force=force, end_run=executor.end_left_run)
    finally:
        executor.close_connection()
    if as_json:
        print(json.dumps({"host": host.name, "messages": said, "exit_code": int(ExitCode.PASS)}, indent=2))
    return ExitCode.PASS


def _repro(c, kit, host, group, inventory, runs_dir, kits_dir, json, image, keep_remote, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit=None, nodes=None):
    given = tasking.paths(c, inventory=inventory, runs_dir=runs_dir, kits_dir=kits_dir, known_hosts=known_hosts,
                  ssh_config=ssh_config)
    tasking.call(lambda: repro(kit, host, given["inventory"], given["kits_dir"], given["runs_dir"], as_json=json, group=group,
                       options=connect_options(given, accept_new_host_key, image, keep_remote), only=list(only or []),
                       skip=list(skip or []), sets=list(set_ or []), dry=tasking.is_dry(c), limit=limit,
                       nodes=int(nodes) if nodes is not None else None))


@task(name="repro", positional=["kit"], iterable=["image", "only", "skip", "set_"],
      help={"kit": "kit name (a file <kits-dir>/<kit>.yml); `invoke kits` lists them",
            "image": "NAME=REFERENCE of a kit image on the host (repeatable)",
            "keep-remote": "keep the run directory on the host after the pull-back is verified",
            "nodes": "on a Slurm host: run on N of its nodes, one record per node (each run's jobs pinned to its node)",
            **RUN_HELP})
def repro_task(c, kit, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
               image=None, keep_remote=False, known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None,
               skip=None, set_=None, limit=None, nodes=None):
    """Run a kit on a host (or a group): fingerprint, steps, expectations, report. `invoke --dry repro KIT` shows the plan."""
    _repro(c, kit, host, group, inventory, runs_dir, kits_dir, json, image, keep_remote, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit, nodes)


@task(name="probe", iterable=["only", "skip", "set_"], help=RUN_HELP)
def probe_task(c, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
               known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None, skip=None, set_=None, limit=None):
    """The SMEM probe kit: shared-memory limits from torch and the driver, launches at and past the opt-in limit."""
    _repro(c, "smem-probe", host, group, inventory, runs_dir, kits_dir, json, None, False, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit)


@task(name="sweep", iterable=["only", "skip", "set_"], help=RUN_HELP)
def sweep_task(c, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
               known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None, skip=None, set_=None, limit=None):
    """The tile-sweep kit: the model's MoE GEMM shapes through every tile on the GPU, cross-checked with the prediction."""
    _repro(c, "tile-sweep", host, group, inventory, runs_dir, kits_dir, json, None, False, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit)


@task(name="collect", positional=["run_dir"],
      help={"run-dir": "the record to finish: runs/<id>, or just the run id",
            "wait": "seconds to wait for the step still running on the host",
            "max-pull-bytes": "cap on the bytes brought back (default 64 GiB)", "runs-dir": RUN_HELP["runs-dir"],
            "prune": "remove the host's copy of a finished run kept for its not-pulled entries (look at them first)",
            "force": "collect a record that still says 'running' (its control process on another machine, or a replaced"
                     " CI container, is gone)",
            "kits-dir": RUN_HELP["kits-dir"], **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def collect_task(c, run_dir, inventory=None, kits_dir=None, wait=3600, json=False, known_hosts=None,
                 accept_new_host_key=False, ssh_config=None, max_pull_bytes=None, runs_dir=None, prune=False, force=False):
    """Finish a detached, incomplete or killed run: wait for its step on the host, pull, verify, judge, report."""
    tasking.no_dry(c, "collect")
    given = tasking.paths(c, inventory=inventory, kits_dir=kits_dir, known_hosts=known_hosts, ssh_config=ssh_config,
                  runs_dir=runs_dir)
    tasking.call(lambda: collect(run_dir, given["inventory"], given["kits_dir"],
                         connect_options(given, accept_new_host_key, max_pull_bytes=max_pull_bytes), float(wait),
                         as_json=json, runs_dir=given["runs_dir"], prune=prune, force=force))


@task(name="unlock", help={"host": "inventory host whose lock to remove", "runs-dir": RUN_HELP["runs-dir"],
                           "force": "also remove a live lock held by another control machine (make sure its run is gone)",
                           **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def unlock_task(c, host, inventory=None, runs_dir=None, json=False, known_hosts=None, accept_new_host_key=False,
                ssh_config=None, force=False):
    """Remove a host's lock whose owner is gone (a live owner's lock is refused; another machine's needs --force)."""
    tasking.no_dry(c, "unlock")
    given = tasking.paths(c, inventory=inventory, runs_dir=runs_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(lambda: unlock(host, given["inventory"], given["runs_dir"], connect_options(given, accept_new_host_key),
                        as_json=json, force=force))


ns = tasking.group("run", "kit runs on hosts", repro_task, probe_task, sweep_task, collect_task, unlock_task)
