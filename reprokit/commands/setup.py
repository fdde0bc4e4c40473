"""`invoke lint`, `build`, `lock`, `provision`: the tree, the images and the hosts made ready."""

from __future__ import annotations

import sys

from reprokit.commands.console import console, err_console, printers
from reprokit.config.inventory import load_inventory
from reprokit.hosts.factory import ConnectOptions


def lint(paths: list[str]) -> int:
    """ruff over the Python sources; the workflows are checked by the test suite (check-jsonschema, zizmor)."""
    import subprocess  # noqa: PLC0415

    return subprocess.run([sys.executable, "-m", "ruff", "check", *paths]).returncode

def build(kit_name: str, host_name: str | None, inventory_path: str, kits_dir: str, image: str | None,
          push: str | None, docker_host: str | None, options: ConnectOptions, as_json: bool = False) -> int:
    from reprokit.hosts.commands import SSHCommandRunner  # noqa: PLC0415 - only builds need it
    from reprokit.images import build_cli  # noqa: PLC0415

    say, _ = printers(False, False)
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
