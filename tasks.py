"""Invoke entry points. Thin on purpose: every behaviour lives in the ``reprokit`` package.

    invoke repro ep8-crash [--host NAME | --group NAME]   run a kit, write runs/<id>/, judge it, report
    invoke probe [--host NAME]               the SMEM probe kit (shared-memory limits, boundary launches)
    invoke sweep [--host NAME]               the tile-sweep kit (MoE GEMM tiles on the GPU, cross-checked)
    invoke collect runs/<id>                 bring back a run whose connection was lost
    invoke unlock --host NAME                remove a stale host lock
    invoke triage LOG|DIR|GLOB [--also ...]  readiness, autotune failures by tile, fatal errors in server logs
    invoke provision --host NAME [--check]   Ansible: driver, Docker, container toolkit, verified GPU in a container
    invoke build [--kit KIT] [--host NAME]   build a kit's pinned images on a host; invoke lock: resolve base digests
    invoke compare runs/<a> runs/<b>         what changed between two runs; invoke bisect: FlashInfer release of a verdict change
    invoke kits | invoke hosts               what the kits and the inventory declare
    invoke check-record runs/<id>            verify a record's artifacts against its manifest
    invoke check-pins [--kit KIT]            compare a kit's pins with the pinned wheels' metadata
"""

from __future__ import annotations

from pathlib import Path

from invoke import Exit, task

from reprokit import bisect as bisect_search
from reprokit import cli, pins
from reprokit.errors import ReprokitError
from reprokit.hosts.factory import ConnectOptions
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS
from reprokit.report.compare import compare_cli
from reprokit.smem_cli import run_smem

INVENTORY = "inventory.yml"
KITS = "kits"
RUNS = "runs"

SSH_HELP = {
    "known-hosts": f"known_hosts file that host keys are verified against (default {DEFAULT_KNOWN_HOSTS})",
    "accept-new-host-key": "trust a host seen for the first time and save its key (a changed key still fails)",
}


# `invoke probe` and `invoke sweep` are `invoke repro <kit>` for one kit each.
KIT_SHORTCUT_HELP = {"host": "inventory host (default: local)", "group": "inventory group, in parallel",
                     "inventory": "inventory file", "runs-dir": "where records go", "json": "print the verdict as JSON",
                     **SSH_HELP}


def _run(fn, *args, **kwargs) -> None:
    try:
        code = int(fn(*args, **kwargs))
    except ReprokitError as exc:
        raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None
    if code:
        raise Exit(code=code)


def _options(known_hosts, accept_new_host_key, image=None, keep_remote=False):
    return ConnectOptions(known_hosts=Path(known_hosts), accept_new_host_key=accept_new_host_key,
                          images=cli.parse_images(image), keep_remote=keep_remote)


@task(
    positional=["kit"],
    iterable=["image"],
    help={
        "kit": "kit name (a file kits/<kit>.yml); `invoke kits` lists them",
        "host": "inventory host to run on (default: local, this machine)",
        "group": "inventory group: run on all its hosts in parallel",
        "inventory": "Ansible YAML inventory file",
        "runs-dir": "where run records are written",
        "json": "print the verdict as JSON instead of tables",
        "quiet": "do not echo the workloads' output",
        "image": "NAME=REFERENCE of a kit image on the host (repeatable)",
        "keep-remote": "keep the run directory on the host after the pull-back is verified",
        **SSH_HELP,
    },
)
def repro(c, kit, host=None, group=None, inventory=INVENTORY, runs_dir=RUNS, json=False, quiet=False, image=None,
          keep_remote=False, known_hosts=str(DEFAULT_KNOWN_HOSTS), accept_new_host_key=False):
    """Run a kit on a host (or a group): fingerprint, steps, expectations, report. Exit code: see README."""
    _run(cli.repro, kit, host, inventory, KITS, runs_dir, as_json=json, quiet=quiet, group=group,
         options=_options(known_hosts, accept_new_host_key, image, keep_remote))


@task(help=KIT_SHORTCUT_HELP)
def probe(c, host=None, group=None, inventory=INVENTORY, runs_dir=RUNS, json=False, known_hosts=str(DEFAULT_KNOWN_HOSTS),
          accept_new_host_key=False):
    """The SMEM probe: shared-memory limits from torch and the driver, launches at and past the opt-in limit."""
    _run(cli.repro, "smem-probe", host, inventory, KITS, runs_dir, as_json=json, group=group,
         options=_options(known_hosts, accept_new_host_key))


@task(help=KIT_SHORTCUT_HELP)
def sweep(c, host=None, group=None, inventory=INVENTORY, runs_dir=RUNS, json=False, known_hosts=str(DEFAULT_KNOWN_HOSTS),
          accept_new_host_key=False):
    """The tile-sweep kit: the model's MoE GEMM shapes through every tile on the GPU, cross-checked with the prediction."""
    _run(cli.repro, "tile-sweep", host, inventory, KITS, runs_dir, as_json=json, group=group,
         options=_options(known_hosts, accept_new_host_key))


@task(positional=["run_dir"], help={"run-dir": "the detached run's record, runs/<id>", "inventory": "inventory file",
                                     "wait": "seconds to wait for the step still running on the host", **SSH_HELP})
def collect(c, run_dir, inventory=INVENTORY, wait=3600, known_hosts=str(DEFAULT_KNOWN_HOSTS), accept_new_host_key=False):
    """Bring back a run whose connection was lost: wait for its step on the host, pull, verify, judge, report."""
    _run(cli.collect, run_dir, inventory, KITS, _options(known_hosts, accept_new_host_key), float(wait))


@task(help={"host": "inventory host whose lock to remove", "inventory": "inventory file", "runs-dir": "runs directory",
            **SSH_HELP})
def unlock(c, host, inventory=INVENTORY, runs_dir=RUNS, known_hosts=str(DEFAULT_KNOWN_HOSTS), accept_new_host_key=False):
    """Remove a host's lock whose owner is gone (a live owner's lock is refused)."""
    _run(cli.unlock, host, inventory, runs_dir, _options(known_hosts, accept_new_host_key))


@task(help={"flashinfer": "flashinfer-python version whose wheel to analyse (default: the ep8-crash kit's pin)",
            "arch": "target architecture(s), comma-separated: sm120, sm121, sm100, sm90",
            "json": "print the result as JSON", "optin-limit": "also judge against this opt-in limit in bytes (e.g. from a probe)",
            "jobs": "parallel nvcc compiles (default one per core, at most 8)"})
def smem(c, flashinfer="0.6.3", arch="sm120", json=False, optin_limit=None, jobs=None):
    """Static shared memory of FlashInfer's CUTLASS MoE kernels per tactic, with verdicts; needs nvcc, no GPU."""
    _run(run_smem, flashinfer, arch, json, int(optin_limit) if optin_limit else None, int(jobs) if jobs else None)


@task(positional=["path"], iterable=["also"],
      help={"path": "a server log (plain or .gz), a directory of logs, or a glob such as 'logs/rank*.log'",
            "also": "another log, directory or glob (repeatable; ranks may be separate files)",
            "flashinfer": "FlashInfer version, for the tactic -> tile table (e.g. 0.6.3)",
            "json": "print the report as JSON"})
def triage(c, path, also=None, flashinfer=None, json=False):
    """Triage server logs: readiness, autotune failures by tile, fatal errors; exit code per verdict (docs/triage.md)."""
    _run(cli.triage, [path, *(also or [])], flashinfer, json)


@task(help={"runs-dir": "a run record, or a directory of them (e.g. one CI job's)",
            "out": "append to this file (e.g. $GITHUB_STEP_SUMMARY) instead of printing"})
def summary(c, runs_dir=RUNS, out=None):
    """Print (or append to a file) the report of each run: verdict first, then the tables."""
    _run(cli.summary, runs_dir, out)


@task
def lint(c):
    """Lint the Python sources (ruff)."""
    _run(cli.lint, ["reprokit", "tests", "tasks.py", "benchmarks"])


@task(help={"kit": "kit whose images to build (default ep8-crash)", "host": "inventory host to build on (default: local)",
            "image": "build only this image of the kit (e.g. workload)", "push": "registry to push to, e.g. 127.0.0.1:5000",
            "docker-host": "a Docker engine to build with (DOCKER_HOST form)", "inventory": "inventory file", **SSH_HELP})
def build(c, kit="ep8-crash", host=None, image=None, push=None, docker_host=None, inventory=INVENTORY,
          known_hosts=str(DEFAULT_KNOWN_HOSTS), accept_new_host_key=False):
    """Build a kit's pinned images on a host (bases from docker/images.lock.yml); prints each image's digest."""
    _run(cli.build, kit, host, inventory, KITS, image, push, docker_host, _options(known_hosts, accept_new_host_key))


@task(help={"only": "resolve only this build argument (e.g. CUDA_DEVEL_IMAGE)"}, iterable=["only"])
def lock(c, only=None):
    """Resolve every pinned base's tag to its digest now and rewrite docker/images.lock.yml."""
    _run(cli.lock, list(only or []) or None)


@task(help={"host": "inventory host to provision", "check": "show what would change, change nothing",
            "inventory": "inventory file", "user": "SSH user for Ansible (default: the inventory's)", **SSH_HELP})
def provision(c, host, check=False, inventory=INVENTORY, user=None, known_hosts=str(DEFAULT_KNOWN_HOSTS),
              accept_new_host_key=False):
    """Provision a GPU host with Ansible (driver, Docker, NVIDIA Container Toolkit, reprokit), then verify a GPU in a container."""
    _run(cli.provision, host, inventory, check, known_hosts, accept_new_host_key, user)


@task(positional=["run_a", "run_b"], help={"run-a": "first run record, runs/<id>", "run-b": "second run record",
                                          "json": "print the differences as JSON"})
def compare(c, run_a, run_b, json=False):
    """What changed between two runs: pins, verdict, expectations, tiles newly fitting/failing, sweep and triage deltas."""
    _run(compare_cli, run_a, run_b, json)


@task(help={"flashinfer": "OLD..NEW, e.g. 0.6.3..0.6.8", "tile": "MxNxK in elements, e.g. 128x256x128",
            "arch": "sm120|sm121|sm100|sm90", "json": "print as JSON", "jobs": "parallel nvcc jobs",
            "work-dir": "keep each version's analysis here (default: a temporary directory)"})
def bisect(c, flashinfer, tile, arch="sm120", json=False, jobs=None, work_dir=None):
    """First FlashInfer release where a tile's static shared-memory verdict changes (no GPU needed)."""
    _run(bisect_search.bisect_cli, flashinfer, tile, arch, json, int(jobs) if jobs else None, work_dir)


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
    """Check a kit's pins against the pinned wheels' own metadata (reads the metadata from PyPI)."""
    _run(pins.check_pins_cli, KITS, kit)
