"""Invoke entry points. Thin on purpose: every behaviour lives in the ``reprokit`` package.

    invoke repro ep8-crash [--host NAME]     run a kit, write runs/<id>/, judge it, report
    invoke probe [--host NAME]               the SMEM probe kit (shared-memory limits, boundary launches)
    invoke kits | invoke hosts               what the kits and the inventory declare
    invoke check-record runs/<id>            verify a record's artifacts against its manifest
    invoke check-pins [KIT]                  compare a kit's pins with the pinned wheels' metadata
"""

from __future__ import annotations

from invoke import Exit, task

from reprokit import cli, pins
from reprokit.errors import ReprokitError

INVENTORY = "inventory.yml"
KITS = "kits"
RUNS = "runs"


def _run(fn, *args, **kwargs) -> None:
    try:
        code = int(fn(*args, **kwargs))
    except ReprokitError as exc:
        raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None
    if code:
        raise Exit(code=code)


@task(
    positional=["kit"],
    help={
        "kit": "kit name (a file kits/<kit>.yml); `invoke kits` lists them",
        "host": "inventory host to run on (default: local, this machine)",
        "inventory": "Ansible YAML inventory file",
        "runs-dir": "where run records are written",
        "json": "print the verdict as JSON instead of tables",
        "quiet": "do not echo the workloads' output",
    },
)
def repro(c, kit, host=None, inventory=INVENTORY, runs_dir=RUNS, json=False, quiet=False):
    """Run a kit on a host: fingerprint, steps, expectations, report. Exit code: see README."""
    _run(cli.repro, kit, host, inventory, KITS, runs_dir, as_json=json, quiet=quiet)


@task(help={"host": "inventory host (default: local)", "inventory": "inventory file", "runs-dir": "where records go",
            "json": "print the verdict as JSON"})
def probe(c, host=None, inventory=INVENTORY, runs_dir=RUNS, json=False):
    """The SMEM probe: shared-memory limits from torch and the driver, launches at and past the opt-in limit."""
    _run(cli.repro, "smem-probe", host, inventory, KITS, runs_dir, as_json=json)


@task
def kits(c):
    """List the kits and the step kinds they can use."""
    _run(cli.list_kits, KITS)


@task(help={"inventory": "inventory file"})
def hosts(c, inventory=INVENTORY):
    """List the inventory's hosts (with the built-in 'local')."""
    _run(cli.list_hosts, inventory)


@task(positional=["run_dir"], help={"run-dir": "a run record directory, runs/<id>"})
def check_record(c, run_dir):
    """Verify every artifact of a run record against the sha256 in its manifest."""
    _run(cli.check_record, run_dir)


@task(help={"kit": "kit to check (default: all kits)"})
def check_pins(c, kit=None):
    """Check a kit's pins against the pinned wheels' own metadata (downloads the wheels' metadata from PyPI)."""
    _run(pins.check_pins_cli, KITS, kit)
