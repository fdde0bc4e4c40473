"""``invoke smem``: the static shared-memory analysis on this machine, no GPU needed.

Runs the ``static-smem`` workload as its own process (as a kit step would on a
host), with a params file and a run directory, then prints its result as a
table or as JSON. Progress lines of long compiles go to stderr as they come.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from reprokit import verbosity
from reprokit.errors import ExitCode
from reprokit.progress import CountProgress
from reprokit.report.smem_table import comparison_table, print_smem_result, smem_summary

WORKLOAD = "reprokit.workloads.static_smem"

# contract.Exit of the workload -> ExitCode of the task (see reprokit/errors.py)
EXIT_CODES = {
    0: ExitCode.PASS,  # analysed; failing tiles are a finding, not a failure of the command
    2: ExitCode.BAD_INPUT,  # bad parameters
    5: ExitCode.STEP_ERROR,  # a probe did not compile or run, or the wheel's sources were not recognised
    6: ExitCode.HOST_ERROR,  # nvcc or the wheel is missing on this machine
}


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
        if not json_out and result.get("status") == "ok" and len(arches) == 1:
            print_smem_result(result, _console())
        elif not json_out and result.get("status") == "ok":
            _console().print(smem_summary(result))
    if json_out:
        print(json.dumps(results[0] if len(arches) == 1 and results else results, indent=2))
    elif len(results) > 1:
        _console().print(comparison_table([r for r in results if r.get("status") == "ok"]))
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
    params_file = run_dir / "params.json"
    params_file.write_text(json.dumps(params, indent=2) + "\n")
    err = Console(stderr=True, highlight=False)
    counts = CountProgress(err)  # "progress: static-smem compile k/n" lines: a bar with an ETA; other lines pass through
    level, held = verbosity.level(), []  # --quiet: the workload's lines only if it fails
    with subprocess.Popen([sys.executable, "-m", WORKLOAD, "--params", str(params_file), "--out-dir", str(run_dir)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace") as done:
        for line in done.stderr or []:
            if level is verbosity.Level.QUIET:
                held.append(line)
            elif not counts.feed(line.rstrip("\n")) or level is verbosity.Level.VERBOSE:
                sys.stderr.write(line)
    counts.stop()
    if done.returncode != 0:
        sys.stderr.writelines(held)
    code = EXIT_CODES.get(done.returncode, ExitCode.STEP_ERROR)
    try:
        result = json.loads((run_dir / "result.json").read_text())
    except (OSError, ValueError):
        err.print(f"static-smem wrote no result (exit {done.returncode}); run directory kept: {run_dir}", markup=False)
        return ExitCode.STEP_ERROR, None
    if code != ExitCode.PASS:
        err.print(f"run directory kept (logs, probes): {run_dir}", markup=False)
    elif out_dir is None:
        shutil.rmtree(run_dir, ignore_errors=True)
    return code, result
