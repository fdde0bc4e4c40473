"""Prepare a run: the images, the executor, the secrets, the host reached and locked, then the record created.

Inputs are validated and the host connected and locked before the run directory is created, so that bad input or
an unusable host leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.config.kit import Kit
from reprokit.errors import ConfigError, HostError
from reprokit.hosts.executor import Executor
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.images.build import built_images
from reprokit.output.say import Say, silent
from reprokit.output.secrets import collect_secrets
from reprokit.phases.reporter import RunReporter
from reprokit.records.atomic import sha256_file
from reprokit.records.run_dir import RunRecord, new_run_id
from reprokit.records.writer_lock import hold_record
from reprokit.step_kinds import STEP_KINDS


@dataclass
class PreparedRun:
    """A run ready for its steps: the host locked through ``executor``, its ``record`` created and held."""

    executor: Executor
    record: RunRecord
    release_record: Callable[[], None]  # the record's lock (``records/writer_lock.py``): one writer per record
    options: ConnectOptions
    host_unreachable: bool = False  # the run ended detached: the host cannot be cleaned up


def prepare(kit: Kit, kit_path: Path, host: Host, runs_dir: Path, inventory: Inventory | None,
            options: ConnectOptions | None, selection: dict[str, Any] | None, reporter: RunReporter) -> PreparedRun:
    """Everything before the first step; ``selection``: the steps chosen and parameters overridden (--only/--skip/--set)."""
    executor, options = host_executor(kit, host, runs_dir, inventory, options, reporter.say)
    secrets = kit_secrets(kit, reporter)
    run_id = new_run_id(kit.kit, host.name)
    executor.connect()  # host keys, auth, reachability: fail before anything is written
    executor.prepare(run_id, secrets)  # the host's lock, the workload code
    try:
        record = RunRecord.create(
            runs_dir,
            run_id,
            kit={"name": kit.kit, "path": str(kit_path), "sha256": sha256_file(kit_path), "description": kit.description.strip()},
            pins=dict(kit.pins),
            host=host.describe(),
            images={name: image_entry(img.dockerfile, options.images.get(name), host) for name, img in kit.images.items()},
            secrets=sorted(secrets),  # names only
            selection=selection or {"only": [], "skip": [], "set": {}},
            fingerprint=None,
            verdict=None,
        )
        release_record = hold_record(record.dir)  # one writer per record: a collect of it waits for this run
    except BaseException:
        executor.finish()
        raise
    reporter.started(run_id, kit.kit, host.name, host.runtime, kit.pins, len(kit.steps))
    return PreparedRun(executor, record, release_record, options)


def host_executor(kit: Kit, host: Host, runs_dir: Path, inventory: Inventory | None, options: ConnectOptions | None,
                  say: Say = silent) -> tuple[Executor, ConnectOptions]:
    """The host's executor (its access, launcher and runtime), not connected, and the options with the kit's images:
    what a run checks before it reaches the host; the dry run (``dry_run.py``) checks it the same way."""
    options = options or ConnectOptions()
    inventory = inventory or Inventory(path=None, hosts={host.name: host})
    check_images(kit, options.images)  # before any host is reached
    built = built_images(host.name, kit.kit)  # what `invoke build --host` made there; --image overrides
    options = replace(options, images={**built, **options.images})
    check_image_references(kit, host, options.images)  # before any host is reached, as the dry run checks it
    return executor_for(host, inventory, runs_dir, options, say), options


def check_images(kit: Kit, images: dict[str, str]) -> None:
    """An ``--image NAME=REF`` the kit does not declare is a typo, refused before the host (exit 2)."""
    for name in sorted(set(images) - set(kit.images)):
        declared = ", ".join(sorted(kit.images)) or "none"
        raise ConfigError(f"--image {name}={images[name]}: kit {kit.kit} declares no image '{name}' (its images: {declared});"
                          " name one of them")


def check_image_references(kit: Kit, host: Host, images: dict[str, str]) -> None:
    """Where the host runs workloads in containers, every host step's image needs a reference (built there by
    ``invoke build --host``, or ``--image NAME=REF``): without one the step would stop at its turn, after the record
    and the earlier steps; here the run stops before anything runs, with the code it would have ended with (4)."""
    if not host.in_container:
        return
    for step in kit.steps:
        if STEP_KINDS[step.uses].where != "host" or not step.image or images.get(step.image):
            continue
        raise HostError(f"host '{host.name}' runs workloads in {host.runtime}, and kit {kit.kit}'s image '{step.image}'"
                        f" (step {step.name}) has no reference for it: build it (`invoke build --kit {kit.kit} --host"
                        f" {host.name}`) or pass --image {step.image}=REF")


def kit_secrets(kit: Kit, reporter: RunReporter) -> dict[str, str]:
    """The kit's secrets set in the environment; each one missing is said, and the run goes on without it."""
    secrets = collect_secrets(kit.secrets)
    for name in kit.secrets:
        if name not in secrets:
            reporter.secret_missing(name)
    return secrets


def image_entry(dockerfile: str, ref: str | None, host: Host) -> dict[str, Any]:
    """The manifest's record of an image: its reference and, when the reference pins one, its digest."""
    digest = ref.split("@", 1)[1] if ref and "@sha256:" in ref else None
    if not host.in_container:
        return {"dockerfile": dockerfile, "ref": None, "digest": None, "note": "native runtime: no image ran"}
    return {"dockerfile": dockerfile, "ref": ref, "digest": digest}
