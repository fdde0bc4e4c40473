"""What `invoke build` and `invoke lock` do, as plain functions returning exit codes (tasks.py only wires them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from reprokit.config.inventory import Host, load_inventory
from reprokit.config.kit import load_kit
from reprokit.errors import ExitCode
from reprokit.hosts.command_runner import Runner
from reprokit.images.build import REPO_ROOT, build_image
from reprokit.images.lock import lock_images
from reprokit.images.lockfile import LOCK_PATH


def build_cli(
    kit_name: str,
    host_name: str | None,
    inventory_path: str,
    kits_dir: str,
    image: str | None = None,
    push: str | None = None,
    docker_host: str | None = None,
    runner_for: Callable[[Host], Runner] | None = None,
    say: Callable[[str], None] = print,
    as_json: bool = False,
) -> int:
    """Build the kit's images (or one of them) on the host; print each image's tag and digest.

    ``runner_for(host)`` gives the command runner for a remote host (the SSH executor's); the local host and
    ``docker_host`` need none.
    """
    kit, _ = load_kit(kit_name, kits_dir)
    host = load_inventory(inventory_path).host(host_name)
    names = [image] if image else list(kit.images)
    runner = runner_for(host) if (runner_for and not host.is_local and not docker_host) else None
    images = []
    for name in names:
        built = build_image(kit, name, host, runner=runner, docker_host=docker_host, push_to=push, say=say,
                            stream=lambda line: say(f"      | {line}"))
        say(f"{kit.kit}/{name} on {host.name}: {built.reference}")
        images.append({**dataclasses.asdict(built), "reference": built.reference})
    if as_json:
        print(json.dumps({"kit": kit.kit, "host": host.name, "images": images}, indent=2, default=str))
    return ExitCode.PASS


def lock_cli(lock_path: str | Path = REPO_ROOT / LOCK_PATH, only: list[str] | None = None,
             say: Callable[[str], None] = print, as_json: bool = False) -> int:
    """Resolve every base's tag to its digest now and rewrite the lock file."""
    changes = lock_images(lock_path, only, say=say)
    moved = [c for c in changes if c.changed]
    say(f"{lock_path}: {len(moved)} of {len(changes)} digests changed" if moved else f"{lock_path}: every digest unchanged")
    if as_json:
        print(json.dumps([{**dataclasses.asdict(c), "changed": c.changed} for c in changes], indent=2))
    return ExitCode.PASS
