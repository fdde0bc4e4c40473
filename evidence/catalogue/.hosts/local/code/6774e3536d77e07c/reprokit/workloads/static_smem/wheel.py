"""The pinned flashinfer-python wheel: fetched once with pip, kept in the cache.

The wheel is the authority for its version: it ships the CUTLASS headers
(``flashinfer/data/cutlass``) and the TensorRT-LLM MoE sources
(``flashinfer/data/csrc/nv_internal``) that FlashInfer's JIT compiles on the
user's machine, so the analysis compiles against exactly those files.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.workloads.contract import Exit, WorkloadError, progress

PACKAGE = "flashinfer-python"
VERSION_PATTERN = re.compile(r"^\d+(\.\d+)*([a-z]+\d*)?(\.post\d+)?(\.dev\d+)?$")
# Parts of the wheel the analysis reads; the rest (Python API, cubins) is not extracted.
EXTRACT_PREFIXES = (
    "flashinfer/data/cutlass/include/",
    "flashinfer/data/cutlass/tools/util/include/",
    "flashinfer/data/csrc/nv_internal/",
    "flashinfer/data/csrc/fused_moe/cutlass_backend/flashinfer_cutlass_fused_moe_",  # _binding.cu; _sm100_binding.cu up to 0.5.3
    "flashinfer/data/include/",
    "flashinfer/jit/",
    "flashinfer/fused_moe/core.py",
    "flashinfer/compilation_context.py",
    "flashinfer/_build_meta.py",
)
PIP_TIMEOUT_S = 600


@dataclass(frozen=True)
class Wheel:
    version: str
    path: Path  # the .whl file in the cache
    sha256: str
    root: Path  # the extracted tree; root / "flashinfer" is the package

    @property
    def package(self) -> Path:
        return self.root / "flashinfer"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_cache_dir() -> Path:
    """``$REPROKIT_CACHE``, else ``$XDG_CACHE_HOME/reprokit`` (an absolute one, as XDG says), else ``~/.cache/reprokit``."""
    if os.environ.get("REPROKIT_CACHE"):
        return Path(os.environ["REPROKIT_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / "reprokit"


def wheel_file_name(version: str, package: str = PACKAGE) -> str:
    """The file name pip gives a pure-Python wheel (``flashinfer_python-0.6.3-py3-none-any.whl``)."""
    return f"{re.sub(r'[-_.]+', '_', package).lower()}-{version}-py3-none-any.whl"


def fetch(version: str, cache_dir: Path, wheel_path: Path | None = None) -> Wheel:
    """The wheel of ``version``, from ``wheel_path``, the cache, its staged sources, or the package index (in that order)."""
    if not VERSION_PATTERN.match(version):
        raise WorkloadError(Exit.BAD_PARAMS, f"flashinfer: {version!r} is not a version number (e.g. \"0.6.3\")")
    wheels_dir = cache_dir / "wheels"
    cached = wheels_dir / wheel_file_name(version)
    if wheel_path is not None:
        if not wheel_path.is_file():
            raise WorkloadError(Exit.MISSING_DEPENDENCY, f"wheel {wheel_path} does not exist")
        path = wheel_path
    elif cached.is_file():
        path = cached
    elif (staged := _staged_sources(version, cached, cache_dir)) is not None:
        return staged
    else:
        path = download(PACKAGE, version, wheels_dir)
    digest = sha256_file(path)
    return Wheel(version=version, path=path, sha256=digest, root=_extract(path, digest, cache_dir))


def sha256_record(wheel_file: Path) -> Path:
    """``<wheel>.sha256`` beside where the wheel would be: a wheel's digest where only its sources were staged."""
    return wheel_file.with_name(wheel_file.name + ".sha256")


def _staged_sources(version: str, cached: Path, cache_dir: Path) -> Wheel | None:
    """The extracted sources of a wheel that is not on this host, found by its sha256 record.

    A host that cannot reach the package index gets the analysed sources of many releases in one bundle
    (``source_bundle``) instead of their wheels; the record keeps the wheel's digest, by which every cache
    and every result is keyed, so the results are those the wheel itself would give.
    """
    record = sha256_record(cached)
    if not record.is_file():
        return None
    digest = (record.read_text().split() or [""])[0]
    root = cache_dir / "static_smem" / "src" / digest[:16]
    complete = root / ".complete"
    if not digest or not complete.is_file() or complete.read_text().strip() != digest:
        raise WorkloadError(Exit.MISSING_DEPENDENCY,
                            f"{record}: the sources of {cached.name} (sha256 {digest[:16] or '?'}) are not complete in "
                            f"{root}; unpack the source bundle again, or put the wheel in {cached.parent}")
    progress(f"static-smem: sources of {cached.name} (sha256 {digest[:12]}) staged without the wheel, from {root}")
    return Wheel(version=version, path=cached, sha256=digest, root=root)


def download(package: str, version: str, wheels_dir: Path) -> Path:
    """``pip download`` one pure-Python wheel into ``wheels_dir`` (atomically: a half download never has its name)."""
    if not VERSION_PATTERN.match(version):
        raise WorkloadError(Exit.BAD_PARAMS, f"{package}: {version!r} is not a version number (e.g. \"0.6.3\")")
    spec = f"{package}=={version}"
    progress(f"downloading {spec} (pip download --no-deps)")
    wheels_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wheels_dir, prefix=".download-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "--quiet", "-d", tmp, spec]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise WorkloadError(Exit.MISSING_DEPENDENCY,
                                f"{spec}: pip download did not finish in {PIP_TIMEOUT_S} s; "
                                f"check the package index, or pass the wheel file as param `wheel`") from None
        if done.returncode != 0:
            raise WorkloadError(Exit.MISSING_DEPENDENCY, _pip_failure(spec, done.stderr + done.stdout)
                                + f"; offline, put {wheel_file_name(version, package)} in {wheels_dir} on this host,"
                                " or in the control machine's cache (~/.cache/reprokit/wheels), which stages it here")
        found = sorted(Path(tmp).glob("*.whl"))
        if not found:
            raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{spec}: pip download produced no wheel")
        target = wheels_dir / wheel_file_name(version, package)
        os.replace(found[0], target)
    return target


def _pip_failure(spec: str, output: str) -> str:
    lines = [line.strip() for line in output.splitlines()
             if line.strip() and not line.startswith("WARNING: Location")]
    if "No module named pip" in output:
        return f"{spec}: cannot fetch the wheel, pip is not installed for {sys.executable}; pass the wheel as param `wheel`"
    if any("No matching distribution found" in line or "Could not find a version" in line for line in lines):
        return f"{spec}: no such wheel on the package index (pip download found no matching distribution)"
    last = lines[-1] if lines else "no output"
    return f"{spec}: cannot fetch the wheel from the package index: {last}"


def _extract(wheel_path: Path, digest: str, cache_dir: Path) -> Path:
    root = cache_dir / "static_smem" / "src" / digest[:16]
    if (root / ".complete").is_file():
        progress(f"static-smem: sources of {wheel_path.name} from the cache {root}")
        return root
    progress(f"static-smem: extracting the sources of {wheel_path.name} into the cache {root}")
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{digest[:16]}-"))
    try:
        with zipfile.ZipFile(wheel_path) as zf:
            members = [m for m in zf.namelist() if m.startswith(EXTRACT_PREFIXES)]
            if not any(m.endswith("moe_gemm_tma_ws_launcher.inl") for m in members):
                raise WorkloadError(Exit.MISSING_DEPENDENCY,
                                    f"{wheel_path.name} has no moe_gemm_tma_ws_launcher.inl: "
                                    "this flashinfer-python does not ship the CUTLASS MoE sources")
            zf.extractall(tmp, members)
        (tmp / ".complete").write_text(digest + "\n")
        if root.exists():  # an interrupted extraction: no .complete in it
            shutil.rmtree(root, ignore_errors=True)
        try:
            os.replace(tmp, root)
        except OSError:
            if not (root / ".complete").is_file():  # else another run extracted it at the same time
                raise
    except zipfile.BadZipFile as exc:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{wheel_path}: not a valid wheel ({exc}); delete it and retry") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root
