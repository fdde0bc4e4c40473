"""What the Invoke tasks do, as plain functions (``tasks.py`` only wires them).

Every function returns an exit code from ``reprokit.errors.ExitCode`` and
raises ``ReprokitError`` for input it cannot use; ``tasks.py`` turns both
into ``invoke.Exit``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from rich.table import Table

from reprokit.collect import collect_run
from reprokit.config import ansible_inventory
from reprokit.config.inventory import load_inventory
from reprokit.config.kit import apply_overrides, kit_names, load_kit, select_steps
from reprokit.dry_run import describe_plan, render_plan
from reprokit.errors import ConfigError, ExitCode, ReprokitError
from reprokit.hosts.executor import LocalFS
from reprokit.hosts.factory import ConnectOptions, remote_executor
from reprokit.hosts.lock import HostLock, break_lock
from reprokit.hosts.pullback import PULL_REPORT_BYTES
from reprokit.hosts.remote import STOP
from reprokit.progress import CountProgress
from reprokit.records.run import load_manifest, resolve_run_dir, verify_record
from reprokit.report.markdown import shorten
from reprokit.report.reasons import record_reasons
from reprokit.runner import RunOutcome, run_kit, step_kinds_table
from reprokit.triage import render_table, triage_files


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`| head`): end quietly with 141, as the plain-print paths do (rich says 1)."""
        os.dup2(os.open(os.devnull, os.O_WRONLY), self.file.fileno())
        raise SystemExit(141)


def _console(stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    # Logs and CI have no terminal: rich would wrap tables at 80 columns there.
    return _Console(stderr=stderr, highlight=False, width=None if probe.is_terminal else 140)


console = _console(stderr=False)
err_console = _console(stderr=True)

VERDICT_STYLE = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow", "INTERRUPTED": "bold red"}


@contextlib.contextmanager
def transfer_progress(description: str, total_bytes: int):
    """A rich progress bar for a pull-back, on a terminal and for transfers worth watching."""
    if not err_console.is_terminal or total_bytes < PULL_REPORT_BYTES:
        yield lambda n: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task_id = progress.add_task(description, total=total_bytes)
        yield lambda n: progress.advance(task_id, n)


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


def _printers(as_json: bool, quiet: bool, prefix: str = ""):
    lock = threading.Lock()
    counts = CountProgress(err_console, prefix)  # "progress: TASK k/n" lines become a bar with an ETA, quiet or not

    def say(message: str) -> None:
        if not as_json:
            counts.stop()
            with lock:
                err_console.print(f"{prefix}{message}", markup=False)

    def stream(line: str) -> None:
        if as_json or counts.feed(line):
            return
        if not quiet:
            with lock:
                err_console.print(f"{prefix}      | {line}", style="dim", markup=False)

    return say, stream


def _print_verdict(kit_name: str, host_name: str, outcome: RunOutcome) -> None:
    verdict = outcome.verdict
    if verdict.get("expectations"):
        table = Table(title=f"{kit_name} on {host_name}", title_justify="left")
        for column in ("expectation", "status", "observed", "reason"):
            table.add_column(column, overflow="fold")
        notes, reasons = record_reasons(outcome.run_dir, verdict["expectations"])  # a shared reason is said once
        for j in verdict["expectations"]:
            observed = json.dumps(j["observed"]) if j["observed"] is not None else ""
            table.add_row(j["name"], j["status"], shorten(observed, 80), reasons.get(j["name"], j["reason"]))
        console.print(table)
        for note in notes:
            console.print(f"note {note.number}: {note.sentence()}", markup=False)
    style = VERDICT_STYLE.get(verdict["verdict"], "bold")
    console.print(f"[{style}]{verdict['verdict']}[/]: {verdict.get('summary', '')}")
    console.print(f"record: {outcome.run_dir}", markup=False)
    if (outcome.run_dir / "report.html").exists():  # an interrupted or detached run has none yet
        console.print(f"report: {outcome.run_dir / 'report.html'}", markup=False)


def repro(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, runs_dir: str, as_json: bool = False,
          quiet: bool = False, group: str | None = None, options: ConnectOptions | None = None, only: list[str] | None = None,
          skip: list[str] | None = None, sets: list[str] | None = None, dry: bool = False, limit: str | None = None) -> int:
    """Run a kit on a host, a group or the hosts of an Ansible pattern (``limit``); ``only``/``skip``/``sets`` select
    steps and override parameters (recorded); ``dry`` only shows the plan."""
    kits = Path(kits_dir)
    kit, kit_path = load_kit(kit_name, kits)
    kit = select_steps(kit, only or [], skip or [])
    kit, overrides = apply_overrides(kit, sets or [])
    selection = {"only": list(only or []), "skip": list(skip or []), "set": overrides}
    inventory = load_inventory(inventory_path)
    _warn(inventory)
    options = options or ConnectOptions()
    given = [flag for flag, value in (("--host", host_name), ("--group", group), ("--limit", limit)) if value]
    if len(given) > 1:
        raise ConfigError(f"give one of --host, --group or --limit, not {' and '.join(given)}")
    if limit:
        hosts = [inventory.host(name) for name in ansible_inventory.match(Path(inventory_path), limit)]
    else:
        hosts = inventory.group(group) if group else [inventory.host(host_name)]
    if dry:
        plan = describe_plan(kit, kit_path, hosts, Path(runs_dir), options, selection, inventory)
        print(json.dumps(plan, indent=2) if as_json else render_plan(plan))
        return ExitCode.PASS
    if options.progress is None and not (group or limit):
        options.progress = transfer_progress
    if group or limit:
        return _fan_out(kit, kit_path, hosts, inventory, Path(runs_dir), kits, as_json, quiet, options, selection)
    host = hosts[0]
    say, stream = _printers(as_json, quiet)
    outcome = run_kit(kit, kit_path, host, Path(runs_dir), kits, say=say, stream=stream, inventory=inventory,
                      options=options, selection=selection)
    if as_json:
        print(json.dumps({"run_dir": str(outcome.run_dir), "exit_code": int(outcome.exit_code), **outcome.verdict}, indent=2))
    else:
        _print_verdict(kit.kit, host.name, outcome)
    return outcome.exit_code


def _fan_out(kit, kit_path, hosts, inventory, runs_dir: Path, kits: Path, as_json: bool, quiet: bool,
             options: ConnectOptions, selection: dict | None = None) -> int:
    """Run the kit on every host of a group in parallel; one bad host does not stop the others."""

    def one(host):
        say, stream = _printers(as_json, quiet, prefix=f"[{host.name}] ")
        try:
            outcome = run_kit(kit, kit_path, host, runs_dir, kits, say=say, stream=stream, inventory=inventory,
                              options=options, selection=selection)
            return host.name, int(outcome.exit_code), outcome.verdict.get("verdict"), str(outcome.run_dir), ""
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
            table.add_row(name, verdict, str(code), run_dir or error)
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


def _warn(inventory) -> None:
    """The inventory's warnings (a misspelt reprokit variable) go to stderr, never into --json output."""
    for warning in getattr(inventory, "warnings", ()):
        print(f"warning: {warning}", file=sys.stderr)  # one line, never wrapped


def collect(run_dir: str, inventory_path: str, kits_dir: str, options: ConnectOptions, wait_s: float,
            as_json: bool = False, runs_dir: str = "runs") -> int:
    say, _ = _printers(as_json, True)
    run_dir = str(resolve_run_dir(run_dir, runs_dir))  # runs/<id>, or just <id>
    outcome = collect_run(Path(run_dir), load_inventory(inventory_path), options, Path(kits_dir), say=say, wait_s=wait_s)
    manifest = load_manifest(run_dir)
    if as_json:
        print(json.dumps({"run_dir": str(outcome.run_dir), "exit_code": int(outcome.exit_code), **outcome.verdict}, indent=2))
    else:
        _print_verdict(manifest["kit"]["name"], manifest["host"]["name"], outcome)
    return outcome.exit_code


def unlock(host_name: str, inventory_path: str, runs_dir: str, options: ConnectOptions, as_json: bool = False,
           force: bool = False) -> int:
    inventory = load_inventory(inventory_path)
    host = inventory.host(host_name)
    said: list[str] = []
    say = said.append if as_json else _printers(False, True)[0]
    if host.is_local:
        lock = HostLock(LocalFS(), host.name, str(Path(runs_dir) / ".locks" / host.name), run_id="")
        break_lock(lock, say, force=force)
    else:
        executor = remote_executor(host, inventory, options, say)
        executor.connect()
        try:
            break_lock(HostLock(executor, host.name, f"{executor.workdir}/lock", run_id=""), say, force=force)
        finally:
            executor.close_connection()
    if as_json:
        print(json.dumps({"host": host.name, "messages": said, "exit_code": int(ExitCode.PASS)}, indent=2))
    return ExitCode.PASS


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


def lint(paths: list[str]) -> int:
    """ruff over the Python sources; the workflows are checked by the test suite (check-jsonschema, zizmor)."""
    import subprocess  # noqa: PLC0415

    return subprocess.run([sys.executable, "-m", "ruff", "check", *paths]).returncode


def build(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, image: str | None,
          push: str | None, docker_host: str | None, options: ConnectOptions, as_json: bool = False) -> int:
    from reprokit.hosts.commands import SSHCommandRunner  # noqa: PLC0415 - only builds need it
    from reprokit.images import build_cli  # noqa: PLC0415

    say, _ = _printers(False, False)
    inventory = load_inventory(inventory_path)
    return build_cli(kit_name, host_name, inventory_path, kits_dir, image=image, push=push, docker_host=docker_host,
                     runner_for=lambda host: SSHCommandRunner(host, inventory, options, say), say=say, as_json=as_json)


def lock(only: list[str] | None, as_json: bool = False) -> int:
    from reprokit.images import lock_cli  # noqa: PLC0415

    say = (lambda m: err_console.print(m, markup=False)) if as_json else (lambda m: console.print(m, markup=False))
    return lock_cli(only=only, say=say, as_json=as_json)


def provision(host_name: str | None, inventory_path: str, check: bool, known_hosts: str, accept_new_host_key: bool,
              user: str | None, **flags) -> int:
    """``flags``: group, limit, diff, tags, skip_tags, extra_vars, as_json, dry (see ``provision_cli``)."""
    from reprokit.provision import provision_cli  # noqa: PLC0415

    out = err_console if flags.get("as_json") else console

    def say(message: str) -> None:
        out.print(message, markup=False, highlight=False, soft_wrap=True)  # Ansible's lines and commands, unwrapped

    return provision_cli(host_name, inventory_path, check=check, known_hosts=known_hosts,
                         accept_new_host_key=accept_new_host_key, user=user, say=say, **flags)


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
    _warn(inventory)
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


def print_error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
