"""`invoke lock` against a real registry (Debian's docker-registry on 127.0.0.1:5000, HTTP API v2), then a
build from the lock it wrote: the same path as with Docker Hub, without the internet."""

from __future__ import annotations

import json

import pytest

from reprokit.config.inventory import local_host
from reprokit.config.kit import load_kit
from reprokit.errors import HostError
from reprokit.images.build import build_image
from reprokit.images.digest_lock import lock_images
from reprokit.images.lockfile import load_lock
from reprokit.images.registry import resolve_digest
from tests.conftest import REPO
from tests.integration.docker_env import DOCKER, ENV, REASON, REGISTRY, docker

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

LOCK = """\
# Test lock: the workload's base by tag, not yet resolved.
reprokit_base_images:
  CUDA_DEVEL_IMAGE:
    tag: {tag}
    digest: null
    source: ''
"""


def test_lock_resolves_the_tag_to_the_digest_the_registry_gave_on_push(tmp_path):
    tag = f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}"
    lock = tmp_path / "images.lock.yml"
    lock.write_text(LOCK.format(tag=tag))
    changes = lock_images(lock, say=lambda _: None, today="2026-11-29")
    assert [(c.arg, c.old, c.new) for c in changes] == [("CUDA_DEVEL_IMAGE", None, ENV["BASE_DIGEST"])]
    entry = load_lock(lock)["CUDA_DEVEL_IMAGE"]
    assert entry.digest == ENV["BASE_DIGEST"]
    assert entry.source == f"invoke lock, {REGISTRY}, 2026-11-29"
    assert lock.read_text().startswith("# Test lock: the workload's base by tag, not yet resolved.\n")

    # Resolved again, nothing moved: the file stays byte for byte (no churn in git).
    before = lock.read_bytes()
    assert not lock_images(lock, say=lambda _: None, today="2026-12-01")[0].changed
    assert lock.read_bytes() == before


def test_a_moved_tag_gets_the_new_digest(tmp_path):
    repo = f"{REGISTRY}/reprokit-test/lock-moves"
    digests = []
    for content in ("one", "two"):
        context = tmp_path / content
        context.mkdir()
        (context / "Dockerfile").write_text(f"FROM {ENV['BASE_IMAGE']}@{ENV['BASE_DIGEST']}\nLABEL version={content}\n")
        docker("build", "-q", "-t", f"{repo}:v1", str(context))
        docker("push", f"{repo}:v1")
        digests.append(resolve_digest(f"{repo}:v1"))
    assert digests[0] != digests[1]
    repo_digests = docker("image", "inspect", "--format", "{{json .RepoDigests}}", f"{repo}:v1").stdout
    assert f"{repo}@{digests[1]}" in repo_digests


def test_an_unknown_tag_is_a_clear_error():
    with pytest.raises(HostError, match="has no such tag"):
        resolve_digest(f"{REGISTRY}/reprokit-test/bookworm:no-such-tag")


def test_build_from_the_lock_it_wrote(tmp_path, monkeypatch):
    """No override: the base comes from the lock, as tag@digest, pulled by BuildKit from the registry."""
    monkeypatch.setenv("REPROKIT_DOCKER", DOCKER or "docker")
    lock = tmp_path / "images.lock.yml"
    lock.write_text(LOCK.format(tag=f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}"))
    lock_images(lock, say=lambda _: None)
    kit = load_kit("ep8-crash", REPO / "kits")[0]
    built = build_image(kit, "workload", local_host(), lock_path=lock, requirements="tests/integration/images/"
                        "requirements-tiny.lock", say=lambda _: None, record=False)
    assert built.bases == {"CUDA_DEVEL_IMAGE": f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}@{ENV['BASE_DIGEST']}"}
    labels = docker("image", "inspect", "--format", "{{json .Config.Labels}}", built.image_id).stdout
    assert f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}@{ENV['BASE_DIGEST']}" in labels


def test_invoke_lock_front_end_prints_the_change_as_json(tmp_path, capsys):
    from reprokit.commands import setup

    lock = tmp_path / "images.lock.yml"
    lock.write_text(LOCK.format(tag=f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}"))
    assert setup.lock(None, as_json=True, lock_path=lock) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out) == [{"arg": "CUDA_DEVEL_IMAGE", "tag": f"{ENV['BASE_IMAGE']}:{ENV['BASE_TAG']}",
                                        "old": None, "new": ENV["BASE_DIGEST"], "changed": True}]
    assert f"{lock}: 1 of 1 digests changed" in printed.err
