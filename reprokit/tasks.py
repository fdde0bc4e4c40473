"""The Invoke tasks, thin on purpose: every behaviour lives in the package (``reprokit.commands``).

``tasks.py`` at the repository root imports ``ns`` from here for ``invoke TASK``; the ``reprokit`` console command
(``reprokit.program.main``) runs the same collection from any directory. Paths (kits, inventory, runs, known_hosts,
ssh_config) come from the ``reprokit`` section of the Invoke config unless a flag gives them.
"""

from __future__ import annotations

from pathlib import Path

from invoke import Exit

from reprokit import bisect as bisect_search
from reprokit import new_kit as new_kit_module
from reprokit import pins, upstream_args
from reprokit.commands import ci, info, records, run, setup
from reprokit.commands.smem import run_smem
from reprokit.errors import ReprokitError
from reprokit.fix.cli import fit_table_cli, fix_cli
from reprokit.fix.upstream_report import upstream_report_cli
from reprokit.hosts.factory import ConnectOptions
from reprokit.program import collection, guard_output, install_parser, is_dry, settings, task

install_parser()

SSH_HELP = {
    "known-hosts": "known_hosts file that host keys are verified against (default: config reprokit.known_hosts,"
                   " .reprokit/known_hosts)",
    "accept-new-host-key": "trust a host seen for the first time and save its key (a changed key still fails)",
    "ssh-config": "OpenSSH client config to honour (default: config reprokit.ssh_config, else ~/.ssh/config);"
                  " 'none' ignores every file",
}
INVENTORY_HELP = {"inventory": "Ansible inventory: YAML or INI file, or a directory (default: config reprokit.inventory)"}
JSON_HELP = {"json": "print the result as JSON on stdout"}
RUN_HELP = {
    "host": "inventory host to run on (default: local, this machine)",
    "group": "inventory group: run on all its hosts in parallel",
    "limit": "an Ansible host pattern (e.g. 'blackwell:!rtx-02'): run on the hosts it selects, in parallel",
    "runs-dir": "where run records are written (default: config reprokit.runs_dir)",
    "kits-dir": "directory of kit files (default: config reprokit.kits_dir)",
    "only": "run only this step (repeatable); the others are recorded as not selected",
    "skip": "do not run this step (repeatable)",
    "set": "STEP.KEY=VALUE: override one `with:` parameter of a step (repeatable; VALUE is YAML)",
    **INVENTORY_HELP, **JSON_HELP, **SSH_HELP,
}


def _run(fn, *args, **kwargs) -> None:
    def call() -> int:
        try:
            return int(fn(*args, **kwargs))
        except ReprokitError as exc:
            raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None

    code = guard_output(call)
    if code:
        raise Exit(code=code)


def _no_dry(c, name: str) -> None:
    """A task that changes a host or a file has no plan to print: under --dry it does nothing, and says so."""
    if is_dry(c):
        raise Exit(f"error: `invoke {name}` has no --dry plan; nothing was done (run it without --dry)", code=2)


def _paths(c, **given):
    """Flags given on the command line win over the config's paths."""
    merged = settings(c)
    merged.update({key: value for key, value in given.items() if value is not None})
    inventory = given.get("inventory")
    if inventory is not None and not (Path(inventory).is_file() or Path(inventory).is_dir()):
        problem = "not found" if not Path(inventory).exists() else "not a regular file or directory (a FIFO?)"
        raise Exit(f"error: {inventory}: inventory {problem} (--inventory); give an existing inventory file", code=2)
    return merged


def _options(paths, accept_new_host_key, image=None, keep_remote=False, max_pull_bytes=None):
    try:  # a bad flag is a one-line error (exit 2), never a traceback
        return ConnectOptions(known_hosts=Path(paths["known_hosts"]), accept_new_host_key=accept_new_host_key,
                              images=run.parse_images(image), keep_remote=keep_remote, ssh_config=paths["ssh_config"],
                              **run.pull_limits(max_pull_bytes if max_pull_bytes is not None else paths.get("max_pull_bytes")))
    except ReprokitError as exc:
        raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None


def _repro(c, kit, host, group, inventory, runs_dir, kits_dir, json, image, keep_remote, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit=None):
    paths = _paths(c, inventory=inventory, runs_dir=runs_dir, kits_dir=kits_dir, known_hosts=known_hosts,
                   ssh_config=ssh_config)
    _run(run.repro, kit, host, paths["inventory"], paths["kits_dir"], paths["runs_dir"], as_json=json,
         group=group, options=_options(paths, accept_new_host_key, image, keep_remote), only=list(only or []),
         skip=list(skip or []), sets=list(set_ or []), dry=is_dry(c), limit=limit)


@task(positional=["kit"], iterable=["image", "only", "skip", "set_"],
      help={"kit": "kit name (a file <kits-dir>/<kit>.yml); `invoke kits` lists them",
            "image": "NAME=REFERENCE of a kit image on the host (repeatable)",
            "keep-remote": "keep the run directory on the host after the pull-back is verified", **RUN_HELP})
def repro(c, kit, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
          image=None, keep_remote=False, known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None,
          skip=None, set_=None, limit=None):
    """Run a kit on a host (or a group): fingerprint, steps, expectations, report. `invoke --dry repro KIT` shows the plan."""
    _repro(c, kit, host, group, inventory, runs_dir, kits_dir, json, image, keep_remote, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit)


@task(iterable=["only", "skip", "set_"], help=RUN_HELP)
def probe(c, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
          known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None, skip=None, set_=None, limit=None):
    """The SMEM probe kit: shared-memory limits from torch and the driver, launches at and past the opt-in limit."""
    _repro(c, "smem-probe", host, group, inventory, runs_dir, kits_dir, json, None, False, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit)


@task(iterable=["only", "skip", "set_"], help=RUN_HELP)
def sweep(c, host=None, group=None, inventory=None, runs_dir=None, kits_dir=None, json=False,
          known_hosts=None, accept_new_host_key=False, ssh_config=None, only=None, skip=None, set_=None, limit=None):
    """The tile-sweep kit: the model's MoE GEMM shapes through every tile on the GPU, cross-checked with the prediction."""
    _repro(c, "tile-sweep", host, group, inventory, runs_dir, kits_dir, json, None, False, known_hosts,
           accept_new_host_key, ssh_config, only, skip, set_, limit)


@task(positional=["run_dir"], help={"run-dir": "the record to finish: runs/<id>, or just the run id",
                                     "wait": "seconds to wait for the step still running on the host",
                                     "max-pull-bytes": "cap on the bytes brought back (default 64 GiB)",
                                     "runs-dir": RUN_HELP["runs-dir"],
                                     "kits-dir": RUN_HELP["kits-dir"], **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def collect(c, run_dir, inventory=None, kits_dir=None, wait=3600, json=False, known_hosts=None, accept_new_host_key=False,
            ssh_config=None, max_pull_bytes=None, runs_dir=None):
    """Finish a detached, incomplete or killed run: wait for its step on the host, pull, verify, judge, report."""
    _no_dry(c, "collect")
    paths = _paths(c, inventory=inventory, kits_dir=kits_dir, known_hosts=known_hosts, ssh_config=ssh_config,
                   runs_dir=runs_dir)
    _run(run.collect, run_dir, paths["inventory"], paths["kits_dir"],
         _options(paths, accept_new_host_key, max_pull_bytes=max_pull_bytes), float(wait), as_json=json,
         runs_dir=paths["runs_dir"])


@task(help={"host": "inventory host whose lock to remove", "runs-dir": RUN_HELP["runs-dir"],
            "force": "also remove a live lock held by another control machine (make sure its run is gone)",
            **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def unlock(c, host, inventory=None, runs_dir=None, json=False, known_hosts=None, accept_new_host_key=False,
           ssh_config=None, force=False):
    """Remove a host's lock whose owner is gone (a live owner's lock is refused; another machine's needs --force)."""
    _no_dry(c, "unlock")
    paths = _paths(c, inventory=inventory, runs_dir=runs_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    _run(run.unlock, host, paths["inventory"], paths["runs_dir"], _options(paths, accept_new_host_key), as_json=json,
         force=force)


@task(help={"flashinfer": "flashinfer-python version whose wheel to analyse (default: the ep8-crash kit's pin)",
            "arch": "target architecture(s), comma-separated: sm120, sm121, sm100, sm90",
            "optin-limit": "also judge against this opt-in limit in bytes (e.g. from a probe)",
            "jobs": "parallel nvcc compiles (default one per core, at most 8)", **JSON_HELP})
def smem(c, flashinfer="0.6.3", arch="sm120", json=False, optin_limit=None, jobs=None):
    """Static shared memory of FlashInfer's CUTLASS MoE kernels per tactic, with verdicts; needs nvcc, no GPU."""
    _run(run_smem, flashinfer, arch, json, int(optin_limit) if optin_limit else None, int(jobs) if jobs else None)


@task(positional=["paths"], iterable=["paths", "also"],
      help={"paths": "server logs (plain or .gz), directories of logs, or globs such as 'logs/rank*.log' (one or more)",
            "also": "another log, directory or glob (repeatable; ranks may be separate files)",
            "flashinfer": "FlashInfer version, for the tactic -> tile table (e.g. 0.6.3)", **JSON_HELP})
def triage(c, paths, also=None, flashinfer=None, json=False):
    """Triage server logs: readiness, autotune failures by tile, fatal errors; exit code per verdict (docs/triage.md)."""
    _run(info.triage, [*paths, *(also or [])], flashinfer, json)


@task(help={"runs-dir": "a run record, or a directory of them (e.g. one CI job's)",
            "out": "append to this file (e.g. $GITHUB_STEP_SUMMARY) instead of printing"})
def summary(c, runs_dir=None, out=None):
    """Print (or append to a file) the report of each run: verdict first, then the tables."""
    _run(records.summary, _paths(c, runs_dir=runs_dir)["runs_dir"], out)


@task
def lint(c):
    """Lint the Python sources (ruff)."""
    _run(setup.lint, ["reprokit", "tests", "tasks.py", "benchmarks"])


@task(help={"kit": "kit whose images to build (default ep8-crash)", "host": "inventory host to build on (default: local)",
            "image": "build only this image of the kit (e.g. workload)", "push": "registry to push to, e.g. 127.0.0.1:5000",
            "docker-host": "a Docker engine to build with (DOCKER_HOST form)", "kits-dir": RUN_HELP["kits-dir"],
            **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def build(c, kit="ep8-crash", host=None, image=None, push=None, docker_host=None, inventory=None, kits_dir=None,
          json=False, known_hosts=None, accept_new_host_key=False, ssh_config=None):
    """Build a kit's pinned images on a host (bases from docker/images.lock.yml); prints each image's digest."""
    _no_dry(c, "build")
    paths = _paths(c, inventory=inventory, kits_dir=kits_dir, known_hosts=known_hosts, ssh_config=ssh_config)
    _run(setup.build, kit, host, paths["inventory"], paths["kits_dir"], image, push, docker_host,
         _options(paths, accept_new_host_key), as_json=json)


@task(help={"only": "resolve only this build argument (e.g. CUDA_DEVEL_IMAGE)", **JSON_HELP}, iterable=["only"])
def lock(c, only=None, json=False):
    """Resolve every pinned base's tag to its digest now and rewrite docker/images.lock.yml."""
    _no_dry(c, "lock")
    _run(setup.lock, list(only or []) or None, as_json=json)


@task(iterable=["tags", "skip_tags", "extra_vars"],
      help={"host": "inventory host to provision", "group": "provision every host of this inventory group",
            "limit": "an Ansible host pattern (e.g. 'blackwell:!rtx-pro-6000-02'), as ansible-playbook --limit",
            "check": "show what would change, change nothing (ansible-playbook --check)",
            "diff": "show the changes in files and templates (ansible-playbook --diff)",
            "tags": "run only the tasks and roles with this tag (repeatable)",
            "skip-tags": "skip the tasks and roles with this tag (repeatable)",
            "extra-vars": "KEY=VALUE, JSON or @FILE, passed to ansible-playbook --extra-vars (repeatable)",
            "user": "SSH user for Ansible (default: the inventory's)", **INVENTORY_HELP, **JSON_HELP, **SSH_HELP})
def provision(c, host=None, group=None, limit=None, check=False, diff=False, tags=None, skip_tags=None, extra_vars=None,
              inventory=None, user=None, json=False, known_hosts=None, accept_new_host_key=False, ssh_config=None):
    """Provision GPU hosts with Ansible (driver, Docker, NVIDIA Container Toolkit, reprokit), then verify a GPU in a container."""
    paths = _paths(c, inventory=inventory, known_hosts=known_hosts, ssh_config=ssh_config)
    _run(setup.provision, host, paths["inventory"], check, paths["known_hosts"], accept_new_host_key, user,
         group=group, limit=limit, diff=diff, tags=list(tags or []), skip_tags=list(skip_tags or []),
         extra_vars=list(extra_vars or []), as_json=json, dry=is_dry(c), ssh_config=paths["ssh_config"])


@task(positional=["run_a", "run_b"], iterable=["runs_dir"],
      help={"run-a": "first run: its id (or a unique part of it) or its directory", "run-b": "second run, the same way",
            "runs-dir": "where to look the ids up (repeatable; default: config reprokit.runs_dir, and evidence)",
            "tolerance-pct": "a figure this much worse than A's is a regression (default 5)",
            "fail-on-regression": "exit 1 when B regressed (for CI)", **JSON_HELP})
def compare(c, run_a, run_b, runs_dir=None, tolerance_pct=5.0, fail_on_regression=False, json=False):
    """What changed from A to B: environment, pins, verdict, expectations, tiles, sweep, triage, serving; regressions."""
    dirs = list(runs_dir or []) or [_paths(c)["runs_dir"], "evidence"]
    _run(records.compare_command, run_a, run_b, dirs, as_json=json, tolerance_pct=float(tolerance_pct),
         fail_on_regression=fail_on_regression)


@task(help={"base": "commit before the push (github.event.before); none or all zeros: every kit",
            "head": "commit after the push (default HEAD)", "kit": "just this kit (a workflow_dispatch input)",
            "kits-dir": RUN_HELP["kits-dir"], "github-output": "append kits=[...] to this file ($GITHUB_OUTPUT)"})
def changed_kits(c, base=None, head="HEAD", kit=None, kits_dir=None, github_output=None):
    """The kits a push changed, as a JSON list (a kit file, a model it uses; docker/ or inventory.yml: every kit)."""
    _run(ci.changed_kits_command, base, head, _paths(c, kits_dir=kits_dir)["kits_dir"], kit=kit, github_output=github_output)


@task(help={"runs-dir": "the CI job's run records", "inconclusive-fails": "INCONCLUSIVE fails the job too"})
def ci_verdict(c, runs_dir=None, inconclusive_fails=False):
    """GitHub annotations for each run (FAIL: errors; INCONCLUSIVE: a warning with its reasons) and the job's status."""
    _run(ci.ci_verdict_command, _paths(c, runs_dir=runs_dir)["runs_dir"], inconclusive_fails=inconclusive_fails)


@task(help={"runs-dir": "directory of run records (default: config reprokit.runs_dir); e.g. evidence",
            "kit": "only runs of this kit", "host": "only runs on this host", "verdict": "only PASS, FAIL or INCONCLUSIVE",
            "gpu": "only runs whose GPU name or arch contains this (e.g. H200, sm120)",
            "since": "only runs started at or after this UTC time (e.g. 2026-11-29)",
            "html": "also write a self-contained index of these runs, with a trend per kit and host, to this file",
            **JSON_HELP})
def runs(c, runs_dir=None, kit=None, host=None, verdict=None, gpu=None, since=None, html=None, json=False):
    """The runs of a directory: verdict, kit, host, GPU, versions, when, git commit; filters; an HTML index."""
    _run(records.runs_command, _paths(c, runs_dir=runs_dir)["runs_dir"], kit=kit, host=host, verdict=verdict, gpu=gpu,
         since=since, as_json=json, html=html)


@task(help={"flashinfer": "OLD..NEW, e.g. 0.6.3..0.6.8", "tile": "MxNxK in elements, e.g. 128x256x128",
            "arch": "sm120|sm121|sm100|sm90", "jobs": "parallel nvcc jobs",
            "work-dir": "keep each version's analysis here (default: a temporary directory)", **JSON_HELP})
def bisect(c, flashinfer, tile, arch="sm120", json=False, jobs=None, work_dir=None):
    """First FlashInfer release where a tile's static shared-memory verdict changes (no GPU needed)."""
    _run(bisect_search.bisect_cli, flashinfer, tile, arch, json, int(jobs) if jobs else None, work_dir)


@task(help={"kit": "take FlashInfer, sglang and the arch from this kit's pins (e.g. ep8-crash)",
            "flashinfer": "flashinfer-python release (default: the kit's pin)", "arch": "sm120|sm121|sm100|sm90",
            "dtype": "MoE dtype: nvfp4 (default), fp8, bf16", "sglang": "sglang release whose flags to check",
            "gpu": "pin the blocklist to this GPU name (default: any, '*')",
            "out": "write fix.json and tactics-blocklist.json into this directory",
            "vllm": "also check vLLM's VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS in this vLLM release's envs.py", **JSON_HELP})
def fix(c, kit=None, flashinfer=None, arch=None, dtype="nvfp4", sglang=None, gpu=None, out=None, json=False, vllm=None):
    """What keeps FlashInfer's failing tactics from being tried: blocklist, sglang/vLLM knobs or fallback, checked (no GPU)."""
    _run(fix_cli, kit, flashinfer, arch, dtype, sglang, gpu, out, json, _paths(c)["kits_dir"], vllm)


@task(positional=["run_dir"], help={"run-dir": "a run record, runs/<id>", "upstream": "draft a bug report for FlashInfer",
                                    "out": "write it to this file (default: print it)"})
def report(c, run_dir, upstream=False, out=None):
    """--upstream: a FlashInfer bug report from a run: fingerprint, byte accounting, reproduction, workaround, guard."""
    if not upstream:
        raise Exit(f"error: the run's own report is {run_dir}/report.md; `invoke report --upstream {run_dir}` drafts "
                   "the bug report for FlashInfer", code=2)
    _run(upstream_report_cli, run_dir, out)


@task(help={"versions": "comma-separated releases (default: every final release from 0.5.0 on the package index)",
            "arch": "comma-separated archs (default sm120,sm121,sm90,sm100)",
            "dtype": "'auto' (NVFP4 everywhere, FP8 and BF16 on sm90) or comma-separated dtypes",
            "jobs": "parallel nvcc jobs", "refresh": "recompute cells already in the table (from the cache)",
            "docs-only": "only rewrite docs/fit-table.md from the data"})
def fit_table(c, versions=None, arch="sm120,sm121,sm90,sm100", dtype="auto", jobs=None, refresh=False, docs_only=False):
    """The static analysis over every FlashInfer release and arch: failing tactics, tiles, bytes (cached; no GPU)."""
    _run(fit_table_cli, versions, arch, dtype, int(jobs) if jobs else None, refresh, docs_only)


@task(help={"kits-dir": RUN_HELP["kits-dir"], **JSON_HELP,
            "check": "check every sglang server and bench_serving flag the kits pass against the pinned release's own"
                     " server_args.py / bench_serving.py (read from its wheel); exit 1 on any it would refuse"})
def kits(c, kits_dir=None, json=False, check=False):
    """List the kits and the step kinds they can use; --check their sglang flags against the pinned wheel."""
    if check:
        _run(upstream_args.check_kits_cli, _paths(c, kits_dir=kits_dir)["kits_dir"])
        return
    _run(info.list_kits, _paths(c, kits_dir=kits_dir)["kits_dir"], as_json=json)


@task(positional=["name"], iterable=["pin"],
      help={"name": "the new kit's name (lower case, digits, '-'); written to <kits-dir>/<name>.yml",
            "kind": "the step kind of its first step (`invoke kits` lists them; default triton-smem)",
            "pin": "NAME=VERSION of a pin the kind needs (repeatable; default: the version the other kits pin)",
            "kits-dir": RUN_HELP["kits-dir"], **JSON_HELP})
def new_kit(c, name, kind="triton-smem", pin=None, kits_dir=None, json=False):
    """Write the skeleton of a new kit from a step kind's declaration (it loads as written; never overwrites)."""
    _no_dry(c, "new-kit")
    _run(new_kit_module.new_kit_cli, name, kind, _paths(c, kits_dir=kits_dir)["kits_dir"], list(pin or []), as_json=json)


@task(help={**INVENTORY_HELP, **JSON_HELP})
def hosts(c, inventory=None, json=False):
    """List the inventory's hosts (with the built-in 'local'); warns about misspelt reprokit variables."""
    _run(info.list_hosts, _paths(c, inventory=inventory)["inventory"], as_json=json)


@task(positional=["run_dir"], help={"run-dir": "a run record directory, runs/<id>", **JSON_HELP})
def check_record(c, run_dir, json=False):
    """Verify every artifact of a run record against the sha256 in its manifest."""
    _run(records.check_record, run_dir, as_json=json)


@task(help={"kit": "kit to check (default: all kits)", "kits-dir": RUN_HELP["kits-dir"], **JSON_HELP})
def check_pins(c, kit=None, kits_dir=None, json=False):
    """Check a kit's pins against the pinned wheels' own metadata (reads the metadata from PyPI)."""
    _run(pins.check_pins_cli, _paths(c, kits_dir=kits_dir)["kits_dir"], kit, as_json=json)


ns = collection(repro, probe, sweep, collect, unlock, smem, triage, summary, lint, build, lock, provision, compare, runs,
                changed_kits, ci_verdict,
                bisect, fix, fit_table, report, kits, new_kit, hosts, check_record, check_pins)
