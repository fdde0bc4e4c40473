"""`invoke lint`, `build`, `lock`, `provision`: the tree, the images and the hosts made ready.

What Ansible is run with and what its recap says is ``reprokit.hosts.provision``'s; here a verdict per host is printed and
the exit code decided.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from reprokit.commands import tasking
from reprokit.commands.console import console, err_console, printers
from reprokit.commands.flags import INVENTORY_HELP, JSON_HELP, KITS_DIR_HELP, SSH_HELP
from reprokit.commands.run import connect_options
from reprokit.commands.tasking import task
from reprokit.config import layers
from reprokit.config.kit import Kit, load_kit
from reprokit.errors import ConfigError, ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, connection_for
from reprokit.hosts.provision import ProvisionResult, ansible_command, check_slurm_host, runs_by_gateway, target_hosts
from reprokit.hosts.provision import provision as run_playbook
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS
from reprokit.images.build import REPO_ROOT, build_image
from reprokit.images.digest_lock import lock_images
from reprokit.images.dockerfile import from_args
from reprokit.images.lockfile import LOCK_PATH
from reprokit.output import verbosity


def lint(paths: list[str]) -> int:
    """ruff over the Python sources; the workflows are checked by the test suite (check-jsonschema, zizmor)."""
    return subprocess.run([sys.executable, "-m", "ruff", "check", *paths]).returncode


def base_overrides(given: list[str]) -> dict[str, str]:
    """``--base ARG=name@sha256:...`` values as the build's base overrides (the digest is checked by the build)."""
    overrides = {}
    for item in given:
        arg, sep, ref = item.partition("=")
        if not sep or not arg or not ref:
            raise ConfigError(f"--base {item!r}: write BUILD_ARG=name@sha256:..., e.g. --base"
                              " SGLANG_IMAGE=mirror.example.org/lmsysorg/sglang@sha256:<64 hex>")
        overrides[arg] = ref
    return overrides


def _base_args(kit: Kit, image: str) -> list[str]:
    return from_args((REPO_ROOT / kit.images[image].dockerfile).read_text(encoding="utf-8"))


def build(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, image: str | None,
          push: str | None, docker_host: str | None, options: ConnectOptions, as_json: bool = False,
          bases: list[str] | None = None) -> int:
    """Build the kit's images (or one of them) on the host; print each image's tag and digest.

    A remote host builds over its connection (the one every step of a run uses); the local host and
    ``docker_host`` build from this machine. ``bases``: ``ARG=name@sha256:...`` replacing bases of the lock (a
    mirror's copy of them).
    """
    overrides = base_overrides(bases or [])
    say, stream = printers(False)  # reprokit's lines and docker's, at the task's --quiet / --verbose level
    kit, _ = load_kit(kit_name, kits_dir)
    inventory = load_inventory(inventory_path)
    host = inventory.host(host_name)
    connection = None if host.is_local or docker_host else connection_for(host, inventory, options, say)
    names = [image] if image else list(kit.images)
    takes = {name: _base_args(kit, name) for name in names if name in kit.images}  # an unknown image: the build says so
    unused = sorted(set(overrides) - {arg for args in takes.values() for arg in args})
    if unused:
        raise ConfigError(f"--base {unused[0]}: no image built here takes it; their bases: "
                          + ", ".join(sorted({arg for args in takes.values() for arg in args})))
    images = []
    try:
        for name in names:
            built = build_image(kit, name, host, connection=connection, docker_host=docker_host, push_to=push, say=say,
                                stream=stream, base_overrides={arg: ref for arg, ref in overrides.items()
                                                               if arg in takes.get(name, ())})
            err_console.print(f"{kit.kit}/{name} on {host.name}: {built.reference}", markup=False)  # the result
            images.append({**dataclasses.asdict(built), "reference": built.reference})
    finally:
        if connection is not None:
            connection.close()
    if as_json:
        print(json.dumps({"kit": kit.kit, "host": host.name, "images": images}, indent=2, default=str))
    return ExitCode.PASS


def lock(only: list[str] | None, as_json: bool = False, lock_path: str | Path | None = None) -> int:
    """Resolve every base's tag to its digest now and rewrite the lock file (a checkout's: an installed copy's lock
    is the wheel's, and the package is never written to)."""
    if lock_path is None:
        if layers.is_installed():
            raise ConfigError(f"{REPO_ROOT / LOCK_PATH}: the lock of an installed reprokit is the wheel's and is not"
                              " rewritten; run `./dev invoke lock` in a checkout, then `./dev install` again")
        lock_path = REPO_ROOT / LOCK_PATH
    say = (lambda m: err_console.print(m, markup=False)) if as_json else (lambda m: console.print(m, markup=False))
    changes = lock_images(lock_path, only, say=say)
    moved = [c for c in changes if c.changed]
    say(f"{lock_path}: {len(moved)} of {len(changes)} digests changed" if moved else f"{lock_path}: every digest unchanged")
    if as_json:
        print(json.dumps([{**dataclasses.asdict(c), "changed": c.changed} for c in changes], indent=2))
    return ExitCode.PASS


def provision(host_name: str | None, inventory_path: str, check: bool, known_hosts: str, accept_new_host_key: bool,
              user: str | None, **flags) -> int:
    """``flags``: group, limit, diff, tags, skip_tags, extra_vars, as_json, dry (see ``provision_hosts``)."""
    out = err_console if flags.get("as_json") else console

    def say(message: str) -> None:
        out.print(message, markup=False, highlight=False, soft_wrap=True)  # Ansible's lines and commands, unwrapped

    def stream(line: str) -> None:  # Ansible's own lines, not under --quiet
        if verbosity.level() is not verbosity.Level.QUIET:
            say(line)

    return provision_hosts(host_name, inventory_path, check=check, known_hosts=known_hosts,
                           accept_new_host_key=accept_new_host_key, user=user, say=say, stream=stream, **flags)


def provision_hosts(
    host_name: str | None,
    inventory_path: str,
    check: bool = False,
    known_hosts: str = str(DEFAULT_KNOWN_HOSTS),
    accept_new_host_key: bool = False,
    user: str | None = None,
    say: Callable[[str], None] = print,
    group: str | None = None,
    limit: str | None = None,
    as_json: bool = False,
    dry: bool = False,
    stream: Callable[[str], None] | None = None,
    **flags,
) -> int:
    """What `invoke provision` does: stream Ansible's output (to ``stream``, default ``say``), then one line of verdict
    per host; returns an exit code.

    Hosts behind different gateways get one ansible-playbook run each (the gateway is in the SSH arguments).
    ``flags``: diff, tags, skip_tags, extra_vars (a list of --extra-vars values), ssh_config.
    """
    inventory = load_inventory(inventory_path)
    targets = target_hosts(inventory, host_name, group, limit, inventory_path)
    flags["extra_args"] = flags.pop("extra_vars", None) or []
    codes: list[int] = []
    report: list[dict] = []
    for host in [h for h in targets if h.slurm is not None]:  # a scheduler's nodes: its admins provision them
        ok, lines = check_slurm_host(host, inventory, ConnectOptions(known_hosts=Path(known_hosts),
                                     accept_new_host_key=accept_new_host_key, ssh_config=flags.get("ssh_config")))
        code = ExitCode.PASS if ok else ExitCode.HOST_ERROR
        codes.append(code)
        report.append({"host": host.name, "exit_code": int(code), "slurm": lines})
        for line in lines if not as_json else []:
            say(f"{host.name}: {line}")
    targets = [h for h in targets if h.slurm is None]
    for hosts in runs_by_gateway(targets):
        run_limit = ",".join(h.name for h in hosts)
        if dry:
            argv = ansible_command(hosts[0], inventory, Path(inventory_path).resolve(), check=check,
                                   known_hosts=Path(known_hosts), accept_new_host_key=accept_new_host_key, user=user,
                                   limit=run_limit, **flags)
            report.append({"hosts": [h.name for h in hosts], "command": argv})
            if not as_json:
                say(f"would run: {shlex.join(argv)}")
            continue
        result = run_playbook(hosts[0], check, inventory=inventory, inventory_path=inventory_path, known_hosts=known_hosts,
                              accept_new_host_key=accept_new_host_key, user=user,
                              on_line=None if as_json else stream or say, limit=run_limit, **flags)
        for host in hosts:
            code, line = _host_verdict(result, host.name, check, known_hosts)
            codes.append(code)
            report.append({"host": host.name, "exit_code": int(code), "recap": result.recaps.get(host.name, {}),
                           "message": line, "command": result.command})
            if not as_json:
                say(line)
    if as_json:
        print(json.dumps({"check": check, "dry_run": dry, "runs": report}, indent=2))
    return max(codes, default=ExitCode.PASS)


def _host_verdict(result: ProvisionResult, host: str, check: bool, known_hosts: str) -> tuple[int, str]:
    recap = result.recaps.get(host, {})
    mode = "would change" if check else "changed"
    if recap and recap.get("failed", 0) == 0 and recap.get("unreachable", 0) == 0 and (result.returncode == 0 or len(result.recaps) > 1):
        return ExitCode.PASS, (f"{host}: provisioned{' (check mode, nothing was changed)' if check else ''}:"
                               f" {recap.get('changed', 0)} task(s) {mode}, {recap.get('ok', 0)} ok, {recap.get('skipped', 0)} skipped")
    if recap.get("unreachable") or not recap:
        return ExitCode.HOST_ERROR, f"{host}: unreachable over SSH (see above); check the address, the key and {known_hosts}"
    messages = [m for m in result.failure_messages(host)]
    detail = "; ".join(messages) + "; " if messages else ""
    return ExitCode.FAIL, f"{host}: {detail}provisioning failed ({recap.get('failed', 0)} task(s) failed); the messages above say what to do"


@task(name="lint")
def lint_task(c):
    """Lint the Python sources (ruff)."""
    tasking.call(lint, ["reprokit", "tests", "tasks.py", "benchmarks"])


@task(name="build", iterable=["base"],
      help={"kit": "kit whose images to build (default ep8-crash)", "host": "inventory host to build on (default: local)",
            "base": "BUILD_ARG=name@sha256:... in place of that base of docker/images.lock.yml, e.g. a mirror's copy"
                    " (digest-pinned; repeatable)",
            "image": "build only this image of the kit (e.g. workload)", "push": "registry to push to, e.g. 127.0.0.1:5000",
            "docker-host": "a Docker engine to build with (DOCKER_HOST form)", "kits-dir": KITS_DIR_HELP,
            **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def build_task(c, kit="ep8-crash", host=None, image=None, push=None, docker_host=None, base=None, inventory=None,
               kits_dir=None, json=False, known_hosts=None, accept_new_host_key=False, ssh_config=None):
    """Build a kit's pinned images on a host (bases from docker/images.lock.yml); prints each image's digest."""
    tasking.no_dry(c, "build")
    given = tasking.paths(c, inventory=inventory, kits_dir=kits_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(lambda: build(kit, host, given["inventory"], given["kits_dir"], image, push, docker_host,
                               connect_options(given, accept_new_host_key), as_json=json, bases=list(base or [])))


@task(name="lock", help={"only": "resolve only this build argument (e.g. CUDA_DEVEL_IMAGE)", **JSON_HELP},
      iterable=["only"])
def lock_task(c, only=None, json=False):
    """Resolve every pinned base's tag to its digest now and rewrite docker/images.lock.yml."""
    tasking.no_dry(c, "lock")
    tasking.call(lock, list(only or []) or None, as_json=json)


@task(name="provision", iterable=["tags", "skip_tags", "extra_vars"],
      help={"host": "inventory host to provision", "group": "provision every host of this inventory group",
            "limit": "an Ansible host pattern (e.g. 'blackwell:!rtx-pro-6000-02'), as ansible-playbook --limit",
            "check": "show what would change, change nothing (ansible-playbook --check)",
            "diff": "show the changes in files and templates (ansible-playbook --diff)",
            "tags": "run only the tasks and roles with this tag (repeatable)",
            "skip-tags": "skip the tasks and roles with this tag (repeatable)",
            "extra-vars": "KEY=VALUE, JSON or @FILE, passed to ansible-playbook --extra-vars (repeatable)",
            "user": "SSH user for Ansible (default: the inventory's)", **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def provision_task(c, host=None, group=None, limit=None, check=False, diff=False, tags=None, skip_tags=None,
                   extra_vars=None, inventory=None, user=None, json=False, known_hosts=None, accept_new_host_key=False,
                   ssh_config=None):
    """Provision GPU hosts with Ansible (driver, Docker, NVIDIA Container Toolkit, reprokit), then verify a GPU in a container."""
    given = tasking.paths(c, inventory=inventory, known_hosts=known_hosts, ssh_config=ssh_config)
    tasking.call(provision, host, given["inventory"], check, given["known_hosts"], accept_new_host_key, user,
                 group=group, limit=limit, diff=diff, tags=list(tags or []), skip_tags=list(skip_tags or []),
                 extra_vars=list(extra_vars or []), as_json=json, dry=tasking.is_dry(c), ssh_config=given["ssh_config"])


ns = tasking.group("setup", "the tree, the images and the hosts made ready", lint_task, build_task, lock_task,
                   provision_task)
tasking.for_developers(lint_task, lock_task)
