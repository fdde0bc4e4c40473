"""A reduced fused-MoE module built earlier on a host of the same release and arch, put where FlashInfer looks.

Why: the module's build is bound by one object and takes 330-500 s on 16 cores, longer than the rest of the step.
FlashInfer's loader (``JitSpec.build_and_load``) loads a library already at the spec's path without building, so a
library carried from an earlier build of the same release and arch saves that time. Nothing is trusted blindly:
the release and the arch it was built for must equal the host's, the workspace must not already hold one, and
its sha256 and size are recorded. Anything else builds as usual. ``in_workspace`` says whether a library is
already at that path (carried, or built by an earlier step on the same host), which the workload then loads.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def place(prebuilt: dict[str, Any], flashinfer_version: str, arch: str) -> dict[str, Any]:
    """Put the carried library in the reduced spec's place; ``used`` says whether the build can be skipped."""
    from reprokit.workloads.static_smem.reduced_module import install  # noqa: PLC0415 - imports flashinfer

    library = Path(prebuilt["library"])
    facts: dict[str, Any] = {"library": str(library), "flashinfer": prebuilt.get("flashinfer"), "arch": prebuilt.get("arch"),
                             "used": False}
    if not library.is_file():
        return {**facts, "why_not": "no such file"}
    if (prebuilt.get("flashinfer"), prebuilt.get("arch")) != (flashinfer_version, arch):
        return {**facts, "why_not": f"built for flashinfer {prebuilt.get('flashinfer')} {prebuilt.get('arch')}, the host has"
                                    f" {flashinfer_version} {arch}"}
    target = Path(install("bf16")["library"])
    if target.exists():
        return {**facts, "why_not": f"the JIT workspace already holds {target}"}
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(library, target)
    return {**facts, "used": True, "placed_at": str(target), "bytes": target.stat().st_size, "sha256": sha256_of(target)}


def in_workspace() -> dict[str, Any] | None:
    """The reduced module's library where FlashInfer's loader looks for it, if one is there (path, bytes, sha256)."""
    from reprokit.workloads.static_smem.reduced_module import install  # noqa: PLC0415 - imports flashinfer

    library = Path(install("bf16")["library"])
    if not library.is_file():
        return None
    return {"library": str(library), "bytes": library.stat().st_size, "sha256": sha256_of(library)}
