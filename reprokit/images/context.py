"""A build's context: exactly the files its Dockerfile copies, from a checkout or from the installed package.

In a checkout the context is what git tracks or would track under those paths (never git-ignored files), and the
image is named by the checkout's commit. An installed reprokit (``pipx install``) has no checkout: its Dockerfiles and
locks are the wheel's copy (``reprokit/shipped/docker``), its workloads are the installed package's own
(``reprokit/workloads`` next to the running code), and the image is named by reprokit's version and a hash of the
context it was built from. Either way the context is one deterministic tar, fed to ``docker build -``.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import reprokit
from reprokit.config import layers
from reprokit.errors import ConfigError
from reprokit.images import dockerfile as dockerfile_rules

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
PACKAGE = "reprokit"  # the context paths under it are the running package's files


@dataclass(frozen=True)
class ContextSource:
    """Where the context's paths are read from: ``root`` (``docker/``, ...), and ``package_parent`` for ``reprokit/``.

    ``git``: a checkout, where git says which files go in and names the image; else an installed copy."""

    root: Path
    package_parent: Path
    git: bool

    def locate(self, rel: str) -> Path:
        return (self.package_parent if rel == PACKAGE or rel.startswith(PACKAGE + "/") else self.root) / rel


def checkout(root: Path) -> ContextSource:
    return ContextSource(root, root, True)


def default_source() -> ContextSource:
    """This reprokit's own: its checkout, or the installed package with the wheel's ``docker/``."""
    if layers.is_installed():
        return ContextSource(layers.builtin_root(), layers.PACKAGE_DIR.parent, False)
    return checkout(layers.builtin_root())


def _expand(text: str, values: dict[str, str]) -> str:
    return _VAR.sub(lambda m: values.get(m.group(1) or m.group(2), ""), text)


def arg_defaults(text: str) -> dict[str, str]:
    """Defaults of the Dockerfile's ARGs (the last declaration wins, as in a build)."""
    values: dict[str, str] = {}
    for ins in dockerfile_rules.parse(text):
        if ins.keyword == "ARG":
            name, eq, default = ins.text.partition("=")
            if eq:
                values[name.strip()] = default.strip().strip('"').strip("'")
    return values


def copy_sources(text: str, build_args: dict[str, str]) -> list[str]:
    """The context paths that COPY and ADD read (not those copied from other stages), with build arguments expanded."""
    values = {**arg_defaults(text), **build_args}
    sources: list[str] = []
    for ins in dockerfile_rules.parse(text):
        if ins.keyword not in ("COPY", "ADD") or "--from=" in ins.text:
            continue
        words = [w for w in ins.text.split() if not w.startswith("--")]
        for word in words[:-1]:
            path = _expand(word, values)
            path = path[2:] if path.startswith("./") else path
            if path not in sources:
                sources.append(path)
    return sources


def _walked(source: ContextSource, paths: list[str]) -> list[str]:
    found = []
    for path in paths:
        where = source.locate(path)
        for file in [where] if where.is_file() else sorted(where.rglob("*")):
            if file.is_file():
                found.append(f"{path.rstrip('/')}/{file.relative_to(where).as_posix()}" if file != where else path)
    return sorted(set(found))


def context_files(source: ContextSource, paths: list[str]) -> list[str]:
    """Files under ``paths``: in a checkout those git tracks or would track; caches never go in."""
    files: list[str] = []
    if source.git:
        try:
            out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *paths], cwd=source.root,
                                 capture_output=True, check=True).stdout.decode()
            files = sorted({f for f in out.split("\0") if f})
        except (OSError, subprocess.CalledProcessError):
            files = _walked(source, paths)
    else:
        files = _walked(source, paths)
    files = [f for f in files if "__pycache__" not in f.split("/") and not f.endswith(".pyc") and source.locate(f).is_file()]
    for path in paths:
        if not any(f == path or f.startswith(path.rstrip("/") + "/") for f in files):
            where = "the repository (or is git-ignored)" if source.git else f"the installed package ({source.locate(path)})"
            raise ConfigError(f"the Dockerfile copies '{path}', which is not in {where}")
    return files


def context_tar(source: ContextSource, files: list[str]) -> bytes:
    """A deterministic tar of ``files``: same files, same bytes, so the engine's cache hits."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(files):
            path = source.locate(rel)
            info = tarfile.TarInfo(rel)
            info.size = path.stat().st_size
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


def git_revision(repo_root: Path, paths: list[str]) -> str:
    """HEAD's commit, with ``-dirty`` when any of ``paths`` differs from it (the image is then not HEAD's)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo_root, capture_output=True, text=True,
                              check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=repo_root, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}-dirty" if status else head


@dataclass(frozen=True)
class Context:
    files: list[str]
    tar: bytes
    revision: str  # a checkout's commit (``-dirty``), else ``<reprokit version>-<sha256 of the tar, 12 hex>``

    @property
    def short(self) -> str:
        """The revision as a tag's part: a commit's first 12 hex (``-dirty`` kept), an installed copy's in full."""
        if re.fullmatch(r"[0-9a-f]{40}(-dirty)?", self.revision):
            return self.revision[:12] + ("-dirty" if self.revision.endswith("-dirty") else "")
        return self.revision


def gather(source: ContextSource, paths: list[str]) -> Context:
    """The context of a build reading ``paths`` (the Dockerfile and what it copies)."""
    files = context_files(source, paths)
    tar = context_tar(source, files)
    if source.git:
        revision = git_revision(source.root, paths)
    else:
        revision = f"{reprokit.__version__}-{hashlib.sha256(tar).hexdigest()[:12]}"
    return Context(files, tar, revision)
