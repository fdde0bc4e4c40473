"""``invoke smem``, ``bisect``, ``fit-table``: the static shared-memory analysis on this machine, no GPU needed.

``smem`` runs the ``static-smem`` workload as its own process (as a kit step would on a
host), with a params file and a run directory, then prints its result as a
table or as JSON. Progress lines of long compiles go to stderr as they come.
``bisect`` and ``fit-table`` print what ``reprokit.fix.bisect`` and ``reprokit.fix.fit_table`` find.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from reprokit.commands import tasking
from reprokit.commands.flags import JSON_HELP
from reprokit.commands.tasking import task
from reprokit.config import layers
from reprokit.errors import ConfigError, ExitCode
from reprokit.fix import bisect as bisect_search
from reprokit.fix import fit_table
from reprokit.hosts.here import error_for, run_here
from reprokit.output import verbosity
from reprokit.output.progress import CountProgress
from reprokit.report.smem_table import comparison_table, print_smem_result, smem_summary
from reprokit.workloads.facts.exits import Exit, StepStatus
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.static_smem.targets import ARCHES

WORKLOAD = "reprokit.workloads.static_smem"

def run_smem(flashinfer: str, arch: str, json_out: bool, optin_limit_bytes: int | None, jobs: int | None,
             out_dir: Path | None = None, cache_dir: Path | None = None) -> int:
    """Analyse ``flashinfer`` for ``arch``; print the table (or JSON); return an ``ExitCode``.

    ``arch`` may list several archs ("sm120,sm100,sm90"): each is analysed in turn
    and a comparison table (largest SharedStorage per tile and arch) follows.
    The run directory (params, result.json, compiler logs, generated probes) is
    ``out_dir`` when given; otherwise a temporary one, removed after a success
    and kept (its path printed) after a failure.
    """
    arches = [a.strip() for a in arch.split(",") if a.strip()]
    results, worst = [], ExitCode.PASS
    for name in arches:
        run_dir = (out_dir / name if len(arches) > 1 else out_dir) if out_dir else None
        code, result = _run_one(flashinfer, name, optin_limit_bytes, jobs, run_dir, cache_dir)
        worst = max(worst, code)
        if result is None:
            continue
        results.append(result)
        if not json_out and result.get("status") == StepStatus.OK and len(arches) == 1:
            print_smem_result(result, _console())
        elif not json_out and result.get("status") == StepStatus.OK:
            _console().print(smem_summary(result))
    if json_out:
        print(json.dumps(results[0] if len(arches) == 1 and results else results, indent=2))
    elif len(results) > 1:
        _console().print(comparison_table([r for r in results if r.get("status") == StepStatus.OK]))
    return worst


def _console() -> Console:
    # Logs and CI have no terminal: do not wrap the wide table at 80 columns there.
    return Console(highlight=False, width=None if Console().is_terminal else 200)


def _run_one(flashinfer: str, arch: str, optin_limit_bytes: int | None, jobs: int | None,
             out_dir: Path | None, cache_dir: Path | None) -> tuple[ExitCode, dict | None]:
    params: dict[str, object] = {"flashinfer": flashinfer, "arch": arch}
    if optin_limit_bytes is not None:
        params["optin_limit_bytes"] = optin_limit_bytes
    if jobs is not None:
        params["jobs"] = jobs
    if cache_dir is not None:
        params["cache_dir"] = str(cache_dir)
    run_dir = out_dir or Path(tempfile.mkdtemp(prefix="reprokit-smem-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    err = Console(stderr=True, highlight=False)
    counts = CountProgress(err)  # "progress: static-smem compile k/n" lines: a bar with an ETA; other lines pass through
    level, held = verbosity.level(), []  # --quiet: the workload's lines only if it fails

    def line_of(line: str) -> None:
        if level is verbosity.Level.QUIET:
            held.append(line + "\n")
        elif not counts.feed(line) or level is verbosity.Level.VERBOSE:
            sys.stderr.write(line + "\n")

    try:
        ran = run_here(WORKLOAD, params, run_dir, "static-smem", on_line=line_of)
    finally:
        counts.stop()
    code = ExitCode.PASS if ran.exit_code == Exit.OK else error_for(ran).exit_code  # analysed: tiles that fail are a finding
    if code != ExitCode.PASS:
        sys.stderr.writelines(held)
    if ran.result is None:
        err.print(f"static-smem wrote no result (exit {ran.exit_code}): {ran.result_problem}; run directory kept: {run_dir}",
                  markup=False)
        return ExitCode.STEP_ERROR, None
    if code != ExitCode.PASS:
        err.print(f"run directory kept (logs, probes): {run_dir}", markup=False)
    elif out_dir is None:
        shutil.rmtree(run_dir, ignore_errors=True)
    return code, ran.result


def bisect_versions(flashinfer: str, tile: str, arch: str, as_json: bool, jobs: int | None = None,
                    work_dir: str | None = None) -> int:
    """Print the first version where the tile's verdict changes (or that it does not); 0 unless something failed."""
    first, last = bisect_search.parse_range(flashinfer)
    bisect_search.check_tile(tile)
    versions = bisect_search.versions_between(bisect_search.available_versions(), first, last)
    root = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="reprokit-bisect-"))
    print(f"bisect {tile} on {arch} over {len(versions)} {bisect_search.PACKAGE} releases: {', '.join(versions)}"
          f" (runs in {root})", file=sys.stderr)
    result = bisect_search.bisect(versions, lambda v: bisect_search.static_verdict(v, arch, tile, root / v, jobs, _log))
    result.update(tile=tile, arch=arch, work_dir=str(root))
    if as_json:
        print(json.dumps(result, indent=2))
        return ExitCode.PASS
    probed = ", ".join(f"{v}: {s}" for v, s in result["probed"].items())
    if result["first_changed"] is None:
        print(f"{tile} on {arch}: '{result['from']}' at both {first} and {last}; no change to find (probed {probed}).")
    else:
        print(f"{tile} on {arch}: '{result['from']}' up to {result['last_unchanged']}, "
              f"'{result['to']}' from {result['first_changed']} (probed {probed}).")
    return ExitCode.PASS


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def fit_table_paths(out: str | None) -> tuple[Path, Path]:
    """Where the table and its page are written: ``--out DIR``, else the checkout's own files. An installed copy
    has no checkout, and its package directory is not for writing: there ``--out`` is needed."""
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        return folder / fit_table.DATA_FILE.name, folder / fit_table.DOCS_PAGE.name
    if layers.is_installed():
        raise ConfigError("fit-table writes the table and its page: give --out DIR (an installed reprokit does not write"
                          " into its own package); the shipped table is read as it is by `invoke fix` and `invoke smem`")
    return fit_table.DATA_FILE, fit_table.DOCS_PAGE


def write_fit_table(versions: str | None, arch: str, dtype: str, jobs: int | None, refresh: bool, docs_only: bool,
                    out: str | None = None) -> int:
    """Regenerate the fit table (cached per wheel) and its docs page."""
    data_file, docs_page = fit_table_paths(out)
    if out and not data_file.exists():  # a new folder starts from the shipped table: its cells are the cache
        data_file.write_text(fit_table.DATA_FILE.read_text())
    if not docs_only:
        chosen = versions.split(",") if versions else fit_table.table_releases(bisect_search.available_versions())
        unknown = [a for a in arch.split(",") if a not in ARCHES]
        if unknown:
            raise ConfigError(f"--arch {','.join(unknown)}: not analysed; known: {', '.join(ARCHES)}")
        started = time.monotonic()
        computed = {"cells_computed": 0, "computed_s": 0.0}
        for spec in fit_table.cell_specs(arch, dtype):
            done = fit_table.generate(chosen, [spec[0]], [spec[1]], wheels.default_cache_dir(), jobs, data_file,
                                      refresh=refresh, log=_log)
            for key in computed:
                computed[key] += done["generation"][key]
        table = fit_table.load(data_file)
        table["generation"] = {**computed, "computed_s": round(computed["computed_s"], 1),
                               "wall_s": round(time.monotonic() - started, 1), "refresh": refresh}
        fit_table.write(table, data_file)
    table = fit_table.load(data_file)
    docs_page.write_text(fit_table.render_markdown(table))
    print(f"fit table: {len(table['cells'])} cells in {data_file}; page {docs_page}")
    return ExitCode.PASS


@task(name="smem", help={"flashinfer": "flashinfer-python version whose wheel to analyse (default: the ep8-crash kit's pin)",
                         "arch": "target architecture(s), comma-separated: sm120, sm121, sm100, sm90",
                         "optin-limit": "also judge against this opt-in limit in bytes (e.g. from a probe)",
                         "jobs": "parallel nvcc compiles (default one per core, at most 8)", **JSON_HELP})
def smem_task(c, flashinfer="0.6.3", arch="sm120", json=False, optin_limit=None, jobs=None):
    """Static shared memory of FlashInfer's CUTLASS MoE kernels per tactic, with verdicts; needs nvcc, no GPU."""
    tasking.call(run_smem, flashinfer, arch, json, int(optin_limit) if optin_limit else None, int(jobs) if jobs else None)


@task(name="bisect", help={"flashinfer": "OLD..NEW, e.g. 0.6.3..0.6.8", "tile": "MxNxK in elements, e.g. 128x256x128",
                           "arch": "sm120|sm121|sm100|sm90", "jobs": "parallel nvcc jobs",
                           "work-dir": "keep each version's analysis here (default: a temporary directory)", **JSON_HELP})
def bisect_task(c, flashinfer, tile, arch="sm120", json=False, jobs=None, work_dir=None):
    """First FlashInfer release where a tile's static shared-memory verdict changes (no GPU needed)."""
    tasking.call(bisect_versions, flashinfer, tile, arch, json, int(jobs) if jobs else None, work_dir)


@task(name="fit-table",
      help={"versions": "comma-separated releases (default: every final release from 0.5.0 on the package index)",
            "arch": "comma-separated archs (default sm120,sm121,sm90,sm100)",
            "dtype": "'auto' (NVFP4 everywhere, FP8 and BF16 on sm90) or comma-separated dtypes",
            "jobs": "parallel nvcc jobs", "refresh": "recompute cells already in the table (from the cache)",
            "docs-only": "only rewrite docs/fit-table.md from the data",
            "out": "write fit-table.json and fit-table.md into this folder (default: the checkout's own; an installed"
                   " reprokit needs it)",
            "new": "only the cells of releases on the package index that the table lacks (post-releases too)",
            "index-url": "with --new: the Simple API to read (default $PIP_INDEX_URL or PyPI)",
            "check": "with --new: exit 1 with the diff when a cell changed"})
def fit_table_task(c, versions=None, arch="sm120,sm121,sm90,sm100", dtype="auto", jobs=None, refresh=False,
                   docs_only=False, new=False, index_url=None, check=False, out=None):
    """The static analysis over every FlashInfer release and arch: failing tactics, tiles, bytes (cached; no GPU)."""
    if new:
        from reprokit.commands.fit_table import new_releases

        tasking.call(lambda: new_releases(index_url, arch, dtype, int(jobs) if jobs else None, check, *fit_table_paths(out)))
        return
    tasking.call(write_fit_table, versions, arch, dtype, int(jobs) if jobs else None, refresh, docs_only, out)


ns = tasking.group("smem", "the static shared-memory analysis, no GPU needed", smem_task, bisect_task, fit_table_task)
