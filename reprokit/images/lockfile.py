"""``docker/images.lock.yml``: every base image as a tag and the digest it was resolved to.

One entry per build argument that a ``FROM ${ARG}`` of a Dockerfile names (and
the image of the GPU check after provisioning). ``invoke build`` passes
``tag@digest``; ``invoke lock`` resolves the tags again and rewrites the
digests, keeping the file's leading comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from reprokit.config.yamlfile import load_yaml
from reprokit.errors import ConfigError
from reprokit.records.atomic import write_text_atomic

LOCK_PATH = Path("docker/images.lock.yml")
LOCK_KEY = "reprokit_base_images"  # a variable name Ansible can read too (ansible/site.yml loads this file)
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
ARG_RE = re.compile(r"[A-Z][A-Z0-9_]*")
_ENTRY_KEYS = ("tag", "digest", "source")
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_NAME_RE = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*")
_TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


@dataclass(frozen=True)
class ImageRef:
    """A parsed image reference: ``[registry/]repository[:tag][@digest]``."""

    registry: str  # as written, or "docker.io" when none is
    repository: str  # with Docker Hub's implicit "library/" for single names
    tag: str | None
    digest: str | None

    @property
    def api_host(self) -> str:
        """The host that serves the registry's HTTP API v2 (Docker Hub's is not docker.io itself)."""
        return "registry-1.docker.io" if self.registry == "docker.io" else self.registry


def parse_reference(text: str) -> ImageRef:
    """Split an image reference the way Docker does (the first part is a registry if it has a dot, a colon or is localhost)."""
    rest, _, digest = text.partition("@")
    first, sep, remainder = rest.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, remainder
    else:
        registry, path = "docker.io", rest
    name, tag = path, None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = path.rsplit(":", 1)
    if registry == "docker.io" and "/" not in name:
        name = f"library/{name}"
    if not _NAME_RE.fullmatch(name) or (tag is not None and not _TAG_RE.fullmatch(tag)):
        raise ValueError(f"not an image reference: {text!r}")
    return ImageRef(registry, name, tag or None, digest or None)


@dataclass(frozen=True)
class BaseImage:
    """One pinned base: the build argument it fills, the tag people read, the digest that is built from."""

    arg: str
    tag: str
    digest: str | None
    source: str = ""
    line: int | None = None  # where the entry is in the lock file

    @property
    def pinned(self) -> bool:
        return bool(self.digest and DIGEST_RE.fullmatch(self.digest))

    @property
    def reference(self) -> str:
        """``tag@digest``: the tag for people, the digest for the engine (which ignores the tag then)."""
        if not self.pinned:
            raise ConfigError(f"{LOCK_PATH}: base {self.arg} ({self.tag}) has no digest; run `invoke lock`")
        return f"{self.tag}@{self.digest}"


def load_lock(path: Path | str = LOCK_PATH) -> dict[str, BaseImage]:
    """The lock file's entries by build argument; any malformed entry is a ConfigError naming file:line."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict) or set(doc.data) != {LOCK_KEY}:
        raise ConfigError(f"{doc.where(())}: a lock file is a mapping with the single key '{LOCK_KEY}'")
    entries = doc.data[LOCK_KEY]
    if not isinstance(entries, dict):
        raise ConfigError(f"{doc.where((LOCK_KEY,))}: '{LOCK_KEY}' must map build arguments to tag and digest")
    images: dict[str, BaseImage] = {}
    for arg, entry in entries.items():
        loc = (LOCK_KEY, arg)
        if not ARG_RE.fullmatch(arg):
            raise ConfigError(f"{doc.where(loc)}: '{arg}' is not a build argument name (UPPER_CASE)")
        if not isinstance(entry, dict):
            raise ConfigError(f"{doc.where(loc)}: '{arg}' must be a mapping with {', '.join(_ENTRY_KEYS)}")
        for key in entry:
            if key not in _ENTRY_KEYS:
                raise ConfigError(f"{doc.where(loc + (key,))}: unknown key '{key}' in '{arg}'; known keys: {', '.join(_ENTRY_KEYS)}")
        tag = entry.get("tag")
        if not isinstance(tag, str) or not tag:
            raise ConfigError(f"{doc.where(loc)}: '{arg}' needs a 'tag' (e.g. nvidia/cuda:12.9.1-devel-ubuntu24.04)")
        try:
            ref = parse_reference(tag)
        except ValueError as exc:
            raise ConfigError(f"{doc.where(loc + ('tag',))}: {exc}") from None
        if ref.digest:
            raise ConfigError(f"{doc.where(loc + ('tag',))}: write the digest under 'digest', not in the tag")
        if ref.tag in (None, "latest"):
            raise ConfigError(f"{doc.where(loc + ('tag',))}: '{tag}' names no version ('latest' or no tag); name an exact tag")
        digest = entry.get("digest")
        if digest is not None and (not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest)):
            raise ConfigError(f"{doc.where(loc + ('digest',))}: digest must be sha256:<64 hex digits> or null, got {digest!r}")
        images[arg] = BaseImage(arg, tag, digest, str(entry.get("source") or ""), doc.line_of(loc))
    return images


def render_lock(images: dict[str, BaseImage], header: str) -> str:
    body = {LOCK_KEY: {arg: {"tag": img.tag, "digest": img.digest, "source": img.source} for arg, img in images.items()}}
    return header + yaml.safe_dump(body, sort_keys=False, width=120, default_flow_style=False)


def lock_header(path: Path | str) -> str:
    """The comment lines at the top of the file (kept when the file is rewritten)."""
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines(keepends=True):
        if not line.startswith("#"):
            break
        lines.append(line)
    return "".join(lines)


def write_lock(path: Path | str, images: dict[str, BaseImage]) -> None:
    path = Path(path)
    header = lock_header(path) if path.exists() else ""
    write_text_atomic(path, render_lock(images, header))


def with_digest(image: BaseImage, digest: str, source: str) -> BaseImage:
    return replace(image, digest=digest, source=source)
