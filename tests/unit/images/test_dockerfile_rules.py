"""Our Dockerfile rules (reprokit.images.dockerfile): every FROM pinned by digest through a build argument and
the lock file, no latest, apt and pip hygiene, a non-root user, no baked secrets. The repository's Dockerfiles
keep them; each broken rule is reported at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.images import dockerfile
from reprokit.images.lockfile import BaseImage, load_lock
from tests.conftest import REPO

DIGEST = "sha256:" + "a" * 64
LOCK = {"BASE_IMAGE": BaseImage("BASE_IMAGE", "debian:12.8", DIGEST)}
GOOD = """\
# a comment
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 \\
 && rm -rf /var/lib/apt/lists/*
COPY requirements.lock /tmp/r.lock
RUN pip install --no-cache-dir --require-hashes -r /tmp/r.lock
ARG UID=10001
USER ${UID}
"""


def problems(text: str, lock=None) -> list[str]:
    return dockerfile.problems("Dockerfile", text, LOCK if lock is None else lock)


@pytest.mark.parametrize("name", ["workload.Dockerfile", "serve.Dockerfile"])
def test_the_repository_dockerfiles_keep_every_rule(name):
    lock = load_lock(REPO / "docker/images.lock.yml")
    path = REPO / "docker" / name
    assert dockerfile.problems(f"docker/{name}", path.read_text(), lock) == []


def test_each_base_of_the_repository_is_pinned_in_the_lock():
    lock = load_lock(REPO / "docker/images.lock.yml")
    args = {}
    for path in sorted((REPO / "docker").glob("*.Dockerfile")):
        args[path.name] = dockerfile.from_args(path.read_text())
    assert args == {"serve.Dockerfile": ["SGLANG_IMAGE"], "workload.Dockerfile": ["CUDA_DEVEL_IMAGE"],
                    "vllm-cpu.Dockerfile": ["VLLM_CPU_BASE_IMAGE"]}
    for arg in ("CUDA_DEVEL_IMAGE", "SGLANG_IMAGE", "VLLM_CPU_BASE_IMAGE"):
        assert lock[arg].pinned, arg
    # The lock's other entry is the image of the GPU check, which the playbook reads.
    assert set(lock) - {"CUDA_DEVEL_IMAGE", "SGLANG_IMAGE", "VLLM_CPU_BASE_IMAGE"} == {"CUDA_BASE_IMAGE"}
    assert "reprokit_base_images.CUDA_BASE_IMAGE" in (REPO / "ansible/site.yml").read_text()


def test_a_good_dockerfile_passes():
    assert problems(GOOD) == []


def test_parse_joins_continuations_and_keeps_the_first_line():
    instructions = dockerfile.parse(GOOD)
    assert [(i.line, i.keyword) for i in instructions] == [
        (2, "ARG"), (3, "FROM"), (4, "SHELL"), (5, "RUN"), (8, "COPY"), (9, "RUN"), (10, "ARG"), (11, "USER")]
    assert instructions[3].text.startswith("apt-get update && apt-get install")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}", "FROM debian:12.8"),
         "Dockerfile:2: FROM debian:12.8: name the base through a build argument"),
        (("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}", "ARG BASE_IMAGE=debian:12.8\nFROM ${BASE_IMAGE}"),
         "Dockerfile:3: FROM ${BASE_IMAGE}: ARG BASE_IMAGE has a default (debian:12.8)"),
        (("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}", "ARG OTHER\nFROM ${OTHER}"),
         "Dockerfile:3: FROM ${OTHER}: docker/images.lock.yml has no entry OTHER"),
        (("ARG BASE_IMAGE\n", ""), "Dockerfile:2: FROM ${BASE_IMAGE}: declare ARG BASE_IMAGE before the first FROM"),
        ((" --no-install-recommends", ""), "Dockerfile:5: apt-get install without --no-install-recommends"),
        ((" \\\n && rm -rf /var/lib/apt/lists/*", ""), "Dockerfile:5: apt lists are left in the layer"),
        (("apt-get update \\\n && ", ""), "Dockerfile:5: apt-get install without apt-get update in the same RUN"),
        (("--no-cache-dir ", ""), "Dockerfile:9: pip install without --no-cache-dir"),
        (("--require-hashes ", ""), "Dockerfile:9: pip install must install a hash-pinned file"),
        (("ARG UID=10001", "ARG UID=0"), "Dockerfile:11: the image ends as root"),
        (("USER ${UID}\n", ""), "Dockerfile:10: the image runs as root; end with USER"),
        (("USER ${UID}", "USER app\nENV HF_TOKEN=abc"), "Dockerfile:12: ENV HF_TOKEN: a secret"),
        (("COPY requirements.lock", "COPY ca-certificates.crt"), "Dockerfile:8: COPY ca-certificates.crt: certificates"),
    ],
)
def test_each_broken_rule_is_reported_at_its_line(change, expected):
    old, new = change
    assert old in GOOD
    found = problems(GOOD.replace(old, new, 1))
    assert len(found) == 1, found
    assert found[0].startswith(expected), found[0]


def test_a_base_the_lock_does_not_pin_is_refused():
    unpinned = {"BASE_IMAGE": BaseImage("BASE_IMAGE", "debian:12.8", None)}
    assert problems(GOOD, unpinned) == [
        "Dockerfile:3: FROM ${BASE_IMAGE}: debian:12.8 has no digest in docker/images.lock.yml; run `invoke lock`"]


def test_latest_in_the_lock_is_refused():
    latest = {"BASE_IMAGE": BaseImage("BASE_IMAGE", "debian:latest", DIGEST)}
    assert problems(GOOD, latest) == ["Dockerfile:3: FROM ${BASE_IMAGE}: debian:latest is 'latest'; name an exact tag"]


def test_multi_stage_builds_may_name_earlier_stages():
    text = GOOD.replace("FROM ${BASE_IMAGE}\n", "FROM ${BASE_IMAGE} AS build\nFROM build\n", 1)
    assert problems(text) == []


def test_the_secret_mount_is_how_the_ca_bundle_gets_in(tmp_path: Path):
    text = (REPO / "docker/workload.Dockerfile").read_text()
    assert "--mount=type=secret,id=ca_bundle" in text
    assert "ca-certificates.crt" not in "".join(i.text for i in dockerfile.parse(text) if i.keyword in ("COPY", "ADD"))
