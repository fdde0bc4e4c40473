"""`invoke lint`, `build`, `lock`, `provision`: the tree, the images and the hosts made ready."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from reprokit import verbosity
from reprokit.commands.console import console, err_console, printers
from reprokit.config.inventory import load_inventory
from reprokit.config.kit import load_kit
from reprokit.errors import ExitCode
from reprokit.hosts.factory import ConnectOptions
from reprokit.images.build import REPO_ROOT, build_image
from reprokit.images.lock import lock_images
from reprokit.images.lockfile import LOCK_PATH


def lint(paths: list[str]) -> int:
    """ruff over the Python sources; the workflows are checked by the test suite (check-jsonschema, zizmor)."""
    return subprocess.run([sys.executable, "-m", "ruff", "check", *paths]).returncode


def build(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, image: str | None,
          push: str | None, docker_host: str | None, options: ConnectOptions, as_json: bool = False) -> int:
    """Build the kit's images (or one of them) on the host; print each image's tag and digest.

    A remote host builds through a command runner over its SSH connection; the local host and ``docker_host``
    need none.
    """
    from reprokit.hosts.commands import SSHCommandRunner  # noqa: PLC0415 - only remote builds need it

    say, stream = printers(False)  # reprokit's lines and docker's, at the task's --quiet / --verbose level
    kit, _ = load_kit(kit_name, kits_dir)
    inventory = load_inventory(inventory_path)
    host = inventory.host(host_name)
    runner = None if host.is_local or docker_host else SSHCommandRunner(host, inventory, options, say)
    images = []
    for name in [image] if image else list(kit.images):
        built = build_image(kit, name, host, runner=runner, docker_host=docker_host, push_to=push, say=say, stream=stream)
        err_console.print(f"{kit.kit}/{name} on {host.name}: {built.reference}", markup=False)  # the result
        images.append({**dataclasses.asdict(built), "reference": built.reference})
    if as_json:
        print(json.dumps({"kit": kit.kit, "host": host.name, "images": images}, indent=2, default=str))
    return ExitCode.PASS


def lock(only: list[str] | None, as_json: bool = False, lock_path: str | Path = REPO_ROOT / LOCK_PATH) -> int:
    """Resolve every base's tag to its digest now and rewrite the lock file."""
    say = (lambda m: err_console.print(m, markup=False)) if as_json else (lambda m: console.print(m, markup=False))
    changes = lock_images(lock_path, only, say=say)
    moved = [c for c in changes if c.changed]
    say(f"{lock_path}: {len(moved)} of {len(changes)} digests changed" if moved else f"{lock_path}: every digest unchanged")
    if as_json:
        print(json.dumps([{**dataclasses.asdict(c), "changed": c.changed} for c in changes], indent=2))
    return ExitCode.PASS


def provision(host_name: str | None, inventory_path: str, check: bool, known_hosts: str, accept_new_host_key: bool,
              user: str | None, **flags) -> int:
    """``flags``: group, limit, diff, tags, skip_tags, extra_vars, as_json, dry (see ``provision_cli``)."""
    from reprokit.provision import provision_cli  # noqa: PLC0415

    out = err_console if flags.get("as_json") else console

    def say(message: str) -> None:
        out.print(message, markup=False, highlight=False, soft_wrap=True)  # Ansible's lines and commands, unwrapped

    def stream(line: str) -> None:  # Ansible's own lines, not under --quiet
        if verbosity.level() is not verbosity.Level.QUIET:
            say(line)

    return provision_cli(host_name, inventory_path, check=check, known_hosts=known_hosts,
                         accept_new_host_key=accept_new_host_key, user=user, say=say, stream=stream, **flags)
