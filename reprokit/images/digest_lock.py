"""``invoke lock``: resolve every base's tag to the digest it names now and rewrite the lock file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reprokit.errors import ConfigError
from reprokit.images.lockfile import LOCK_PATH, load_lock, parse_reference, with_digest, write_lock
from reprokit.images.registry import resolve_digest
from reprokit.output.say import Say, silent


@dataclass(frozen=True)
class LockChange:
    arg: str
    tag: str
    old: str | None
    new: str

    @property
    def changed(self) -> bool:
        return self.old != self.new


def lock_images(
    lock_path: Path | str = LOCK_PATH,
    only: list[str] | None = None,
    resolve: Callable[[str], str] = resolve_digest,
    say: Say = silent,
    today: str | None = None,
) -> list[LockChange]:
    """Resolve the tags of ``only`` (default: every entry) and rewrite ``lock_path``; one LockChange per entry resolved.

    Nothing is written unless every tag resolved: a half-updated lock would pin a mix of old and new bases.
    """
    images = load_lock(lock_path)
    unknown = [arg for arg in only or [] if arg not in images]
    if unknown:
        raise ConfigError(f"{lock_path}: no entry {', '.join(unknown)}; entries: {', '.join(images)}")
    day = today or datetime.now(UTC).strftime("%Y-%m-%d")
    changes = []
    updated = dict(images)
    for arg in only or list(images):
        image = images[arg]
        digest = resolve(image.tag)
        registry = parse_reference(image.tag).api_host
        if digest != image.digest or not image.source.startswith("invoke lock"):
            # A digest confirmed again keeps its date: the file changes only when a pin does.
            updated[arg] = with_digest(image, digest, f"invoke lock, {registry}, {day}")
        change = LockChange(arg, image.tag, image.digest, digest)
        changes.append(change)
        say(f"{arg}: {image.tag} -> {digest}" + ("" if change.changed else " (unchanged)"))
    if updated != images:
        write_lock(lock_path, updated)
    return changes
