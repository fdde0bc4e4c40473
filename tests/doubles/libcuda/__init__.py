"""The libcuda double, built once per source: ``libcuda.so.1`` and a ``python3`` that loads it, for test hosts.

The SSH test hosts and the Slurm nodes share this machine's filesystem, so one build in the repository's ``.cache``
serves them all: a host whose ``ansible_python_interpreter`` is :func:`gpu_python` runs its workloads with the
double as its CUDA driver, and its fingerprint reports the GPU the double describes (README.md).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SOURCE = HERE / "libcuda.c"
GCC = ["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-Wl,-soname,libcuda.so.1"]


def build_dir() -> Path:
    """``.cache/doubles/libcuda``: the one place the test hosts, the Slurm nodes and dockerd's hook load it from."""
    return (REPO / ".cache").resolve() / "doubles" / "libcuda"


def libcuda() -> Path:
    """The built ``libcuda.so.1``, rebuilt with gcc when the source changed (under a lock; readable by every user)."""
    out = build_dir()
    library = out / "libcuda.so.1"
    stamp = hashlib.sha256(SOURCE.read_bytes() + " ".join(GCC).encode()).hexdigest()
    if (out / "source.sha256").is_file() and (out / "source.sha256").read_text() == stamp:
        return library
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".libcuda.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (out / "source.sha256").is_file() and (out / "source.sha256").read_text() == stamp:
            return library
        staging = out.with_name(f"libcuda.tmp{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        subprocess.run([*GCC, "-o", str(staging / "libcuda.so.1"), str(SOURCE)], check=True)
        _write_python(staging, out)
        (staging / "source.sha256").write_text(stamp)
        for path in (staging, *staging.iterdir()):
            path.chmod(0o755)
        old = out.with_name(f"libcuda.old{os.getpid()}")
        if out.exists():
            out.rename(old)  # a process that loaded the old library keeps its mapping
        staging.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    return library


def _write_python(staging: Path, final: Path) -> None:
    (staging / "python3").write_text(
        "#!/bin/sh\n"
        "# python3 on a test host whose CUDA driver is the libcuda double (tests/doubles/libcuda)\n"
        f'LD_LIBRARY_PATH={final}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\n'
        "export LD_LIBRARY_PATH\n"
        'exec python3 "$@"\n')


def gpu_python() -> Path:
    """A ``python3`` whose ``libcuda.so.1`` is the double: the interpreter a test host's inventory names."""
    return libcuda().parent / "python3"
