"""One run's directory and its manifest.

Layout::

    runs/<id>/manifest.json        what ran, where, with which pins; status; artifact hashes
    runs/<id>/fingerprint/         the environment fingerprint step
    runs/<id>/steps/<step>/        params.json, step.log, result.json, other artifacts
    runs/<id>/verdict.json         expectations and the verdict
    runs/<id>/report.md            for people

The manifest is written atomically at every state change, starting with
``status: running`` and the owner's pid and host. A run stopped by Ctrl-C or
SIGTERM ends as ``interrupted``; a run killed outright leaves ``running``
with a pid that no longer exists, which ``load_manifest`` reports as
``killed``. Artifact hashes are listed when the run is finalised, from the digests taken as each file was
written or pulled (``records.digests``): each byte is hashed once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import secrets
import shutil
import socket
import stat
from pathlib import Path
from typing import Any

from reprokit import __version__
from reprokit.config.names import check_name
from reprokit.errors import ConfigError
from reprokit.records.atomic import no_room, unwritable, write_json_atomic
from reprokit.records.digests import DIGESTS, sha256_file
from reprokit.records.models import Artifact, Manifest, RunStatus, StepEntry, Verdict
from reprokit.records.provenance import source_provenance

MANIFEST = "manifest.json"
VERDICT = "verdict.json"
MANIFEST_SCHEMA_VERSION = 1
MANIFEST_FIELDS = frozenset(f.name for f in dataclasses.fields(Manifest))


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_run_id(kit: str, host: str) -> str:
    check_name("kit", kit)
    check_name("host", host)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{kit}-{host}-{secrets.token_hex(2)}"


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine still exists (a zombie counts as alive until reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def started_after(pid: int, when: str) -> bool:
    """Whether process ``pid`` of this machine started after ``when`` (ISO 8601, UTC): a pid reused since the run's
    control process died. False where this cannot be read (no /proc): the pid is then taken as the run's."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot_s = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                      if line.startswith("btime "))
        began_s = boot_s + int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return began_s > dt.datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp() + 1
    except (OSError, ValueError, IndexError, StopIteration):
        return False


class RunRecord:
    """The run directory and its manifest; every ``update`` rewrites the manifest atomically."""

    def __init__(self, root: Path, run_id: str, manifest: Manifest):
        self.root = root
        self.run_id = run_id
        self.dir = root / run_id
        self.manifest = manifest

    @classmethod
    def create(cls, runs_dir: Path | str, run_id: str, **fields: Any) -> RunRecord:
        """A new record; ``fields`` are the manifest's JSON fields (kit, pins, host, ...), validated as read back."""
        runs_dir = Path(runs_dir)
        if "/" in run_id or run_id.startswith(".") or not run_id:
            raise ConfigError(f"run id {run_id!r} would leave {runs_dir}; refused")
        run_dir = runs_dir / run_id
        data: dict[str, Any] = {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "run_id": run_id,
            "status": RunStatus.RUNNING,
            "started": utc_now(),
            "ended": None,
            "owner": {"pid": os.getpid(), "hostname": socket.gethostname()},
            "reprokit": {"version": __version__},
            "source": source_provenance((fields.get("kit") or {}).get("path")),  # git commit, CI run URL
            **fields,
            "steps": [],
            "artifacts": {},
        }
        manifest = Manifest.from_json(data, f"{run_dir / MANIFEST} (being created)")
        try:
            run_dir.mkdir(parents=True, exist_ok=False)
        except OSError as exc:  # a runs directory read-only or full from the start: one line, not a traceback
            refused = unwritable(exc) or no_room(exc, run_dir)
            if refused:
                raise refused from None
            raise
        record = cls(runs_dir, run_id, manifest)
        try:
            record.save()
        except BaseException:
            with contextlib.suppress(OSError):  # nothing half-written: no record without its manifest
                shutil.rmtree(run_dir)
            raise
        return record

    @classmethod
    def open_existing(cls, run_dir: Path | str) -> RunRecord:
        """Reopen a record (for ``invoke collect``); its manifest is read as written, not re-judged."""
        run_dir = Path(run_dir)
        return cls(run_dir.parent, run_dir.name, load_manifest(run_dir))

    def save(self) -> None:
        write_json_atomic(self.dir / MANIFEST, self.manifest.to_json(), hashed=False)  # the manifest is no artifact

    def update(self, **fields: Any) -> None:
        """Set manifest fields (typed values: ``verdict=VerdictSummary(...)``) and save."""
        for name, value in fields.items():
            if name not in MANIFEST_FIELDS:
                raise AttributeError(f"a run manifest has no field {name!r}")
            setattr(self.manifest, name, RunStatus(value) if name == "status" else value)
        self.save()

    def step_dir(self, name: str) -> Path:
        path = self.dir / "steps" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def set_step(self, entry: StepEntry, **fields: Any) -> None:
        """Record a step's entry, and any other manifest fields with it (``in_flight=None``), in one save."""
        for name, value in fields.items():
            if name not in MANIFEST_FIELDS:
                raise AttributeError(f"a run manifest has no field {name!r}")
            setattr(self.manifest, name, value)
        steps = self.manifest.steps
        for i, existing in enumerate(steps):
            if existing.name == entry.name:
                steps[i] = entry
                break
        else:
            steps.append(entry)
        self.save()

    def hash_artifacts(self) -> dict[str, Artifact]:
        """Every file of the record with its sha256: the digest taken when it was written or pulled, while unchanged."""
        artifacts: dict[str, Artifact] = {}
        for path in sorted(self.dir.rglob("*")):
            rel = path.relative_to(self.dir).as_posix()
            if path.is_file() and not path.is_symlink() and not is_internal(rel):
                artifacts[rel] = Artifact(DIGESTS.sha256_of(path), path.stat().st_size)
        return artifacts

    def finish(self, status: RunStatus, **fields: Any) -> None:
        """End the record in a final status (complete, failed, interrupted) and hash its files."""
        status = RunStatus(status)
        assert status.final, status
        for name, value in fields.items():
            setattr(self.manifest, name, value)
        self.manifest.status = status
        self.manifest.ended = utc_now()
        self.manifest.artifacts = self.hash_artifacts()
        self.save()
        DIGESTS.forget_under(self.dir)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); the record is damaged") from None


def load_verdict(run_dir: Path | str) -> Verdict | None:
    """The record's ``verdict.json``, validated; None when the run ended before it was judged."""
    path = Path(run_dir) / VERDICT
    try:
        data = _read_json(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    return Verdict.from_json(data, str(path))


def load_manifest(run_dir: Path | str) -> Manifest:
    """Read and validate a manifest; a ``running`` one whose owner process is gone is reported as ``killed``."""
    path = Path(run_dir) / MANIFEST
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ConfigError(f"{path}: not a regular file; is {run_dir} a run directory?")
        data = _read_json(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no manifest; is {run_dir} a run directory?") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        raise ConfigError(f"{path}: not a run manifest (expected a JSON object with a 'status'); the record is damaged")
    manifest = Manifest.from_json(data, str(path))
    owner = manifest.owner
    if manifest.status == RunStatus.RUNNING and owner.hostname == socket.gethostname():
        if not pid_alive(owner.pid):
            manifest.status = RunStatus.KILLED
            manifest.status_detail = f"the run's process (pid {owner.pid}) is gone and never finalised the manifest"
        elif started_after(owner.pid, manifest.started):
            manifest.status = RunStatus.KILLED
            manifest.status_detail = (f"the run's process is gone and never finalised the manifest (its pid {owner.pid}"
                                      " now names a process that started after the run)")
    return manifest


def verify_record(run_dir: Path | str) -> list[str]:
    """Problems with a record's artifacts: missing, changed or unlisted files. Empty when intact (read from the bytes)."""
    run_dir = Path(run_dir)
    listed = load_manifest(run_dir).artifacts
    problems: list[str] = []
    for rel, artifact in sorted(listed.items()):
        path = run_dir / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != artifact.sha256:
            problems.append(f"{rel}: sha256 differs from the manifest")
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir).as_posix()
        if path.is_symlink():
            problems.append(f"{rel}: a symbolic link; a record holds regular files only")
        elif path.is_file() and not is_internal(rel) and rel not in listed:
            problems.append(f"{rel}: not listed in the manifest")
    return problems


def is_internal(rel: str) -> bool:
    """Files of reprokit's own machinery in a record: the manifest, half-written temporaries, partial pulls."""
    parts = rel.split("/")
    name = parts[-1]
    return (rel == MANIFEST or any(p.startswith(".partial-") for p in parts)
            or (name.startswith(".") and name.endswith((".tmp", ".redacting"))))


def load_steps(run_dir: Path | str) -> dict[str, StepEntry]:
    """The manifest's steps by name, each with its ``result.json`` read back (the manifest never holds results): what
    a finished record's headline and reports are drawn from. A result that cannot be read is left as None."""
    steps = {}
    for entry in load_manifest(run_dir).steps:
        path = Path(run_dir) / "steps" / entry.name / "result.json"
        try:
            result = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, ValueError):
            result = None
        steps[entry.name] = dataclasses.replace(entry, result=result if isinstance(result, dict) else None)
    return steps


def short_run_id(run_id: str) -> str:
    """The id's random part (``c6f9`` of ``20261206T031052Z-ep8-crash-local-c6f9``): what a person types; every task
    that takes a run finds the record by it (``resolve_run_dir``)."""
    return run_id.rsplit("-", 1)[-1]


def resolve_run_dir(spec: str | Path, runs_dir: Path | str = "runs") -> Path:
    """A record given as a path (``runs/<id>``), a run id, or a unique part of one (``c6f9``, as the console shows
    it), looked up in ``runs_dir``. An ambiguous part is an error naming the candidates; one that matches nothing is
    returned as a path, for the reader to say what is missing there."""
    path = Path(spec)
    if (path / MANIFEST).exists() or "/" in str(spec):
        return path
    candidate = Path(runs_dir) / str(spec)
    if (candidate / MANIFEST).exists():
        return candidate
    root = Path(runs_dir)
    found = sorted(d for d in root.iterdir() if str(spec) in d.name and (d / MANIFEST).is_file()) if root.is_dir() else []
    if len(found) > 1:
        raise ConfigError(f"run '{spec}' is ambiguous in {root}: {', '.join(d.name for d in found[:5])}"
                          + (" ..." if len(found) > 5 else "") + "; give more of the id")
    return found[0] if found else path
