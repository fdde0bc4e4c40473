"""History across runs: find the records under a directory, summarise each, filter them, resolve a run id.

``invoke runs`` lists them (verdict, kit, host, GPU, versions, when, git commit); ``invoke compare`` takes
run ids (or record paths) and prints what changed; ``invoke runs --html F`` writes a self-contained index of
every run with a trend chart per kit and host. Records are read, never changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Word
from reprokit.records.run_dir import MANIFEST, load_manifest, load_verdict

MAX_DEPTH = 4  # runs/<id>/ or evidence/<host>/<id>/: records sit a level or two down, never inside a step
VERSION_PACKAGES = ("torch", "flashinfer-python", "sglang", "triton")


@dataclass
class RunSummary:
    run_id: str
    dir: str
    status: str
    verdict: str
    kit: str
    host: str
    gpu: str
    gpu_arch: str
    driver: str
    versions: str
    started: str
    git_commit: str
    held: int  # expectations that held
    judged: int  # expectations in the verdict

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_records(root: Path) -> list[Path]:
    """Every directory under ``root`` (or ``root`` itself) holding a run manifest, by run id."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: no such directory; give a directory of run records, e.g. runs or evidence")
    if (root / MANIFEST).is_file():
        return [root]
    found: list[Path] = []
    frontier = [root]
    for _ in range(MAX_DEPTH):
        next_frontier = []
        for directory in frontier:
            for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
                if (child / MANIFEST).is_file():
                    found.append(child)
                elif child.name not in ("steps", "fingerprint"):
                    next_frontier.append(child)
        frontier = next_frontier
    return sorted(found, key=lambda p: p.name)


def summarise(run_dir: Path) -> RunSummary:
    manifest = load_manifest(run_dir)
    verdict = load_verdict(run_dir)
    word = verdict.verdict if verdict else manifest.verdict.verdict if manifest.verdict else "-"
    expectations = verdict.expectations if verdict else []
    fp = manifest.fingerprint or Fingerprint()
    devices = fp.devices
    names: dict[str, int] = {}
    for device in devices:
        names[str(device.name)] = names.get(str(device.name), 0) + 1
    gpu = ", ".join(f"{n} x {name}" for name, n in names.items()) or "none"
    installed = fp.packages
    pins = manifest.pins or {}
    versions = ", ".join(f"{name} {installed[name]}" if installed.get(name) else f"{name} {pins[name]} (pinned, not seen)"
                         for name in VERSION_PACKAGES if installed.get(name) or pins.get(name))
    driver = fp.driver.driver_release if fp.driver else None
    return RunSummary(
        run_id=manifest.run_id or run_dir.name, dir=str(run_dir), status=manifest.status,
        verdict=word,
        kit=str(manifest.kit_name), host=str(manifest.host_name),
        gpu=gpu, gpu_arch="/".join(fp.gpu_arches) or "-",
        driver=str(driver) if driver else "-", versions=versions, started=manifest.started or "-",
        git_commit=str((manifest.source or {}).get("git_commit") or "-")[:12],
        held=sum(j.status == Word.PASS for j in expectations), judged=len(expectations))


def list_runs(root: Path, kit: str | None = None, host: str | None = None, verdict: str | None = None,
              gpu: str | None = None, since: str | None = None, warn: Callable[[str], None] | None = None) -> list[RunSummary]:
    """The runs under ``root``, oldest first; filters match exactly (kit, host, verdict) or as a substring (gpu).

    One damaged record is skipped with a warning (``warn``), never the whole directory refused; without ``warn``
    its error is raised.
    """
    out = []
    for run_dir in find_records(root):
        try:
            run = summarise(run_dir)
        except ConfigError as exc:
            if warn is None:
                raise
            warn(f"warning: skipped {run_dir.name}: {exc}")
            continue
        if kit and run.kit != kit or host and run.host != host or verdict and run.verdict != verdict.upper():
            continue
        if gpu and gpu.lower() not in f"{run.gpu} {run.gpu_arch}".lower():
            continue
        if since and run.started < since:
            continue
        out.append(run)
    return sorted(out, key=lambda r: (r.started, r.run_id))


def resolve_run(spec: str, search: list[Path]) -> Path:
    """A record's directory from its path, its run id, or a unique part of the id, looked up under ``search``."""
    path = Path(spec)
    if path.is_dir():
        return path
    candidates: dict[str, Path] = {}
    for root in search:
        if Path(root).is_dir():
            for run_dir in find_records(Path(root)):
                candidates.setdefault(run_dir.name, run_dir)
    if spec in candidates:
        return candidates[spec]
    partial = sorted(name for name in candidates if spec in name)
    if len(partial) == 1:
        return candidates[partial[0]]
    where = ", ".join(str(r) for r in search)
    if partial:
        raise ConfigError(f"run '{spec}' is ambiguous under {where}: {', '.join(partial)}; give more of the id")
    raise ConfigError(f"run '{spec}': no such record under {where}; `invoke runs --runs-dir DIR` lists them")
