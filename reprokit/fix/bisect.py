"""``invoke bisect --flashinfer V1..V2 --tile T --arch A``: the first FlashInfer release where a tile's verdict changes.

No GPU: each version probed is read from the fit table (``invoke fit-table``,
``reprokit/data/fit-table.json``) when it has that release; otherwise it runs the
static shared-memory analysis (nvcc on the CPU) as its own process, as a kit step would (``python -m
reprokit.workloads.static_smem --params P --out-dir D``), limited to the one
tile. The releases between V1 and V2 come from the package index (``pip index
versions``; pre-releases and dev builds are left out unless named as an end).
The search is binary, so it assumes the verdict changes once between the ends;
every probed version and its verdict are reported so a second change shows.
Results are cached per wheel by the workload: a second bisect compiles nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from reprokit.errors import ConfigError, HostError
from reprokit.fix import fit_table
from reprokit.hosts.here import error_for, run_here
from reprokit.output.say import Say, silent
from reprokit.report.compare import tile_status
from reprokit.step_kinds import STEP_KINDS
from reprokit.step_kinds.static_smem import StaticSmemResult
from reprokit.workloads.facts.exits import StepStatus

PACKAGE = "flashinfer-python"
PIP_TIMEOUT_S = 120
TILE = re.compile(r"^\d+x\d+x\d+$")


def parse_range(text: str) -> tuple[str, str]:
    """``"0.6.3..0.6.8"`` -> ("0.6.3", "0.6.8")."""
    first, sep, last = text.partition("..")
    try:
        if not sep or Version(first) >= Version(last):
            raise InvalidVersion(text)
    except InvalidVersion:
        raise ConfigError(f"--flashinfer {text!r}: expected OLD..NEW, two versions oldest first (e.g. 0.6.3..0.6.8)") from None
    return first, last


def check_tile(text: str) -> str:
    """``--tile``: MxNxK in elements."""
    if not TILE.match(text):
        raise ConfigError(f"--tile {text!r}: expected MxNxK in elements, e.g. 128x256x128")
    return text


def parse_pip_index(text: str) -> list[str]:
    """The versions of ``pip index versions`` output (its "Available versions:" line)."""
    for line in text.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    return []


def available_versions(package: str = PACKAGE) -> list[str]:
    command = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check", package]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise HostError(f"`pip index versions {package}` did not answer in {PIP_TIMEOUT_S} s; check the package index") from None
    versions = parse_pip_index(done.stdout)
    if done.returncode != 0 or not versions:
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise HostError(f"`pip index versions {package}` listed no versions (exit {done.returncode}): {detail}")
    return versions


def versions_between(available: list[str], first: str, last: str) -> list[str]:
    """The releases from ``first`` to ``last`` inclusive, oldest first; post releases in, pre/dev out."""
    known = {str(Version(v)): v for v in available}
    for end in (first, last):
        if str(Version(end)) not in known:
            raise ConfigError(f"--flashinfer: {PACKAGE} {end} is not on the package index; "
                              f"newest there: {', '.join(available[:8])}")
    lo, hi = Version(first), Version(last)
    chosen = [v for v in available if lo <= Version(v) <= hi and not (Version(v).is_prerelease or Version(v).is_devrelease)]
    chosen += [known[str(Version(end))] for end in (first, last) if known[str(Version(end))] not in chosen]
    return sorted(set(chosen), key=Version)


def bisect(versions: list[str], verdict_of: Callable[[str], str]) -> dict[str, Any]:
    """Binary search for the first version whose verdict differs from the oldest one's."""
    probed: dict[str, str] = {}

    def verdict(index: int) -> str:
        version = versions[index]
        if version not in probed:
            probed[version] = verdict_of(version)
        return probed[version]

    old, new = verdict(0), verdict(len(versions) - 1)
    result: dict[str, Any] = {"versions": versions, "from": old, "to": new, "first_changed": None, "last_unchanged": None}
    if old != new:
        lo, hi = 0, len(versions) - 1  # verdict(lo) == old, verdict(hi) != old
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if verdict(mid) == old:
                lo = mid
            else:
                hi = mid
        result.update(first_changed=versions[hi], last_unchanged=versions[lo], to=verdict(hi))
    result["probed"] = {v: probed[v] for v in versions if v in probed}
    return result


# contract.Exit of the workload -> the error a person gets
def table_verdict(version: str, arch: str, tile: str, table_path: Path | None = None) -> str | None:
    """The verdict from the fit table (``invoke fit-table``), or None when the table has no readable cell for it."""
    found = fit_table.cell(version, arch, "nvfp4", table_path or fit_table.DATA_FILE)
    if found is None or found["status"] == "unreadable":
        return None
    return tile_status(StaticSmemResult(status="ok", failing_tiles=found.get("failing_tiles"),
                                        fitting_tiles=found.get("fitting_tiles"),
                                        unsupported_tiles=found.get("dispatch_rejected_tiles")), tile)


def static_verdict(version: str, arch: str, tile: str, run_dir: Path, jobs: int | None = None, say: Say = silent) -> str:
    """The static-smem verdict of ``tile`` in FlashInfer ``version`` on ``arch``: fails, fits, unsupported or absent.

    Read from the fit table when it has the release; otherwise the analysis runs (and caches) for this one tile.
    """
    from_table = table_verdict(version, arch, tile)
    if from_table is not None:
        return from_table
    params: dict[str, Any] = {"flashinfer": version, "arch": arch, "variants": [tile]}
    if jobs is not None:
        params["jobs"] = jobs
    module = STEP_KINDS["static-smem"].module  # run as a kit's step runs it: progress and errors said as they come
    ran = run_here(str(module), params, run_dir, "static-smem", on_line=say)
    result = ran.result or {}
    if ran.exit_code != 0 or result.get("status") != StepStatus.OK:
        raise error_for(ran)(f"flashinfer {version} ({arch}): the static analysis failed (exit {ran.exit_code}): "
                             f"{result.get('error', ran.result_problem or 'no result.json')}; its run directory: {run_dir}")
    return tile_status(STEP_KINDS["static-smem"].read_result(result, str(run_dir / "result.json")), tile)

