"""Pinned images: the lock file of base digests, our Dockerfile rules, builds on a host, the lock's digests.

    load_lock / write_lock      docker/images.lock.yml (build argument -> tag, digest)
    dockerfile.problems         the pinning and hygiene rules every Dockerfile in docker/ must keep
    build_image                 build a kit's image on a host (through a runner), return its digest
    lock_images                 resolve the tags to digests (registry HTTP API v2) and rewrite the lock
"""

from reprokit.images.build import BuiltImage, build_image, built_images, docker_cli
from reprokit.images.digest_lock import LockChange, lock_images
from reprokit.images.lockfile import LOCK_PATH, BaseImage, load_lock, parse_reference, write_lock
from reprokit.images.registry import resolve_digest

__all__ = [
    "BaseImage", "BuiltImage", "LOCK_PATH", "LockChange",
    "build_image", "built_images", "docker_cli", "load_lock", "lock_images", "parse_reference",
    "resolve_digest", "write_lock",
]
