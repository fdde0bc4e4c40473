"""Finding nvcc, and running compiles in parallel with their logs kept.

A failed compile stops the others and becomes one line for people (the first
``error`` line and where the full log is); the full compiler output stays in
the log file of the run directory, never on the terminal.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.workloads.contract import Exit, WorkloadError, count_progress

MIN_VERSION = (12, 8)  # first nvcc whose CUTLASS headers enable SM100/SM120 (CUTLASS_ARCH_MMA_SM120_SUPPORTED)
DEFAULT_LOCATIONS = ("/usr/local/cuda/bin/nvcc",)
COMPILE_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 120


@dataclass(frozen=True)
class Nvcc:
    path: Path
    version: str  # "13.0.88"

    @property
    def release(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)


def find_nvcc(explicit: str | None = None, default_locations: tuple[str, ...] = DEFAULT_LOCATIONS) -> Nvcc:
    """nvcc from the ``nvcc`` param, else $CUDA_HOME/bin, PATH, /usr/local/cuda/bin."""
    if explicit:
        candidates = [Path(explicit)]
        where = f"param nvcc={explicit}"
    else:
        candidates = [Path(os.environ[v]) / "bin" / "nvcc" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
        on_path = shutil.which("nvcc")
        candidates += [Path(on_path)] if on_path else []
        candidates += [Path(p) for p in default_locations]
        where = "$CUDA_HOME/bin, PATH, " + ", ".join(default_locations)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return Nvcc(candidate, _version(candidate))
    raise WorkloadError(Exit.MISSING_DEPENDENCY,
                        f"nvcc not found (looked in {where}); install the CUDA toolkit >= 12.8 "
                        "or pass its path as param `nvcc`")


def _version(path: Path) -> str:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"nvcc at {path} does not run: {exc}") from None
    match = re.search(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)", out)
    if not match:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"nvcc at {path}: cannot read its version from `nvcc --version`")
    version = match.group(2)
    nvcc = Nvcc(path, version)
    if nvcc.release < MIN_VERSION:
        raise WorkloadError(Exit.MISSING_DEPENDENCY,
                            f"nvcc {version} at {path} is older than 12.8, the first release whose CUTLASS "
                            "headers enable SM100/SM120 kernels; install CUDA >= 12.8")
    return version


@dataclass
class Compile:
    """One nvcc invocation producing ``output`` (an object file)."""

    name: str
    args: list[str]  # everything after nvcc, without -o/-MF
    output: Path
    log: Path
    inputs_text: str  # the text the result depends on besides args (sources, generated headers)
    depfile: Path = field(init=False)

    def __post_init__(self) -> None:
        self.depfile = self.output.with_suffix(".d")

    def cache_key(self, nvcc: Nvcc) -> str:
        digest = hashlib.sha256()
        for part in (nvcc.version, "\0".join(self.args), self.inputs_text):
            digest.update(part.encode())
            digest.update(b"\1")
        return digest.hexdigest()


class CompileError(Exception):
    def __init__(self, job: Compile, first_error: str):
        super().__init__(first_error)
        self.job = job
        self.first_error = first_error


def first_error_line(log_text: str) -> str:
    for line in log_text.splitlines():
        if re.search(r"\berror\b", line, re.I) and not line.lstrip().startswith("#"):
            return " ".join(line.split())[:300]
    lines = [line for line in log_text.splitlines() if line.strip()]
    return " ".join(lines[-1].split())[:300] if lines else "no output"


class DependencyCache:
    """Objects found again by the files the compile really read, across wheels (ccache's "direct mode").

    Two FlashInfer releases often compile a probe from byte-identical headers in different directories
    (the extracted wheels). A compile is keyed by its arguments and program text with those directories
    replaced by names (``path_roots``); each entry lists every file nvcc's depfile named, with its sha256.
    An entry is used only when every one of those files, under this run's roots, has the same sha256.
    """

    def __init__(self, directory: Path, path_roots: dict[str, Path]):
        self.directory = directory
        # longest first, so a root inside another one is replaced before it
        self.roots = sorted(((name, str(path.resolve())) for name, path in path_roots.items()),
                            key=lambda item: -len(item[1]))

    def normalize(self, text: str) -> str:
        for name, root in self.roots:
            text = text.replace(root, name)
        return text

    def localize(self, text: str) -> str:
        for name, root in self.roots:
            text = text.replace(name, root)
        return text

    def key(self, job: Compile, nvcc: Nvcc) -> str:
        digest = hashlib.sha256()
        for part in (nvcc.version, self.normalize("\0".join(job.args)), self.normalize(job.inputs_text)):
            digest.update(part.encode())
            digest.update(b"\1")
        return digest.hexdigest()[:32]

    def find(self, job: Compile, nvcc: Nvcc) -> Path | None:
        """The cached object of an earlier compile that read the same bytes, its depfile written for this run."""
        path = self.directory / f"{self.key(job, nvcc)}.json"
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        for entry in entries:
            obj = self.directory.parent / entry["object"]
            if obj.is_file() and all(_sha256(Path(self.localize(dep))) == digest for dep, digest in entry["deps"].items()):
                job.depfile.write_text(self.localize(entry["depfile"]))
                return obj
        return None

    def add(self, job: Compile, nvcc: Nvcc, cached_object: Path) -> None:
        deps = {self.normalize(str(dep if dep.is_absolute() else job.output.parent / dep)): _sha256(
            dep if dep.is_absolute() else job.output.parent / dep) for dep in dependencies(job.depfile)}
        if not deps or None in deps.values():
            return
        path = self.directory / f"{self.key(job, nvcc)}.json"
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError):
            entries = []
        entries.append({"object": cached_object.name, "deps": deps,
                        "depfile": self.normalize(job.depfile.read_text(errors="replace"))})
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(json.dumps(entries))
        os.replace(tmp, path)


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class Compiler:
    """Runs compiles ``jobs`` at a time; objects are cached by the hash of their inputs.

    With ``path_roots`` (e.g. the extracted wheel and the probe directory), an object is also found
    again by the content of every file it read (``DependencyCache``), whatever directory held it.
    """

    def __init__(self, nvcc: Nvcc, object_cache: Path, jobs: int, path_roots: dict[str, Path] | None = None):
        self.nvcc = nvcc
        self.object_cache = object_cache
        self.dependency_cache = DependencyCache(object_cache / "by-deps", path_roots) if path_roots else None
        self.jobs = max(1, jobs)
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._cancelled = False
        self.cache_hits = 0
        self.compiled: list[tuple[str, float]] = []
        self._total = self._done = 0  # compile units of the current run_all, for progress

    def run_all(self, compiles: list[Compile]) -> None:
        """Compile everything, or raise CompileError for the first failure (the others are stopped)."""
        if not compiles:
            return
        self._total, self._done = len(compiles), 0
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(self._one, job) for job in compiles]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in done if f.exception() is not None]
            if failed:
                self._cancel()
                for future in futures:
                    future.cancel()
                raise failed[0].exception()  # type: ignore[misc]

    def _cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for proc in self._running:
                proc.terminate()

    def _one(self, job: Compile) -> None:
        if self._cancelled:
            return
        key = job.cache_key(self.nvcc)
        cached = self.object_cache / f"{key[:32]}.o"
        cached_deps = cached.with_suffix(".d")
        job.output.parent.mkdir(parents=True, exist_ok=True)
        if cached.is_file():
            shutil.copyfile(cached, job.output)
            if cached_deps.is_file():
                shutil.copyfile(cached_deps, job.depfile)
            job.log.write_text(f"(object cache hit: {cached})\n")
            with self._lock:
                self.cache_hits += 1
            self._finished(job.name, "cached")
            return
        same_bytes = self.dependency_cache.find(job, self.nvcc) if self.dependency_cache else None
        if same_bytes is not None:
            shutil.copyfile(same_bytes, job.output)
            job.log.write_text(f"(object cache hit by dependencies: {same_bytes}; every file nvcc read is byte-identical)\n")
            with self._lock:
                self.cache_hits += 1
            self._finished(job.name, "cached")
            return
        command = [str(self.nvcc.path), *job.args, "-MD", "-MF", str(job.depfile), "-o", str(job.output)]
        started = time.monotonic()
        with open(job.log, "w") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            with self._lock:
                if self._cancelled:
                    return
                proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=job.output.parent)
                self._running.add(proc)
            try:
                returncode = proc.wait(timeout=COMPILE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                returncode = -9
            finally:
                with self._lock:
                    self._running.discard(proc)
        elapsed = time.monotonic() - started
        if returncode != 0:
            if self._cancelled:
                return
            text = job.log.read_text(errors="replace")
            message = first_error_line(text) if returncode != -9 else f"timed out after {COMPILE_TIMEOUT_S} s"
            raise CompileError(job, message)
        self.object_cache.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        shutil.copyfile(job.output, tmp)
        os.replace(tmp, cached)
        if job.depfile.is_file():
            shutil.copyfile(job.depfile, cached_deps)
            if self.dependency_cache:
                with self._lock:
                    self.dependency_cache.add(job, self.nvcc, cached)
        with self._lock:
            self.compiled.append((job.name, elapsed))
        self._finished(job.name, f"compiled in {elapsed:.0f} s")

    def _finished(self, name: str, how: str) -> None:
        """One compile unit done: ``progress: static-smem compile k/n`` (the control plane draws a bar with an ETA)."""
        with self._lock:
            self._done += 1
            done = self._done
        count_progress("static-smem compile", done, self._total, f"{name} {how}")

    def link_and_run(self, name: str, objects: list[Path], gencode: str, work_dir: Path, log: Path) -> list[str]:
        """Link a host program and run it; its stdout lines (JSON records)."""
        exe = work_dir / name
        command = [str(self.nvcc.path), gencode, *map(str, objects), "-o", str(exe)]
        with open(log, "a") as fh:
            fh.write("$ " + " ".join(command) + "\n")
            fh.flush()
            linked = subprocess.run(command, stdout=fh, stderr=subprocess.STDOUT, timeout=COMPILE_TIMEOUT_S)
        if linked.returncode != 0:
            raise CompileError(Compile(name, command, exe, log, ""), first_error_line(log.read_text(errors="replace")))
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        with open(log, "a") as fh:
            fh.write(f"$ {exe}\n{ran.stdout}{ran.stderr}(exit {ran.returncode})\n")
        if ran.returncode != 0:
            raise WorkloadError(Exit.CHECK_FAILED,
                                f"probe program {name} exited with {ran.returncode}: "
                                f"{first_error_line(ran.stderr or ran.stdout)}; full output: {log}")
        return ran.stdout.splitlines()


def dependencies(depfile: Path) -> list[Path]:
    """The files a compile read, from nvcc's -MD output."""
    if not depfile.is_file():
        return []
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    _, _, deps = text.partition(":")
    return [Path(p) for p in deps.split()]
