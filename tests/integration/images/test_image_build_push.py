"""The real Dockerfiles built by reprokit.images.build_image on a real dockerd, pushed to a real registry on
loopback and pulled back by digest.

No registry on the internet can be pulled from in CI, so the CUDA and sglang bases are replaced by the
debootstrapped Debian of tests/services/up.d/20-docker.sh, itself pinned by the digest the local registry
gave it; the workload's requirements are a tiny hash-pinned file (one wheel of the real lock, fetched from
PyPI through the host's CA bundle passed as a build secret) instead of gigabytes of CUDA wheels.
"""

from __future__ import annotations

import json
import re

import pytest

from reprokit.config.inventory import local_host
from reprokit.config.kit import load_kit
from reprokit.errors import ConfigError
from reprokit.images.build import build_image, built_images
from reprokit.images.context import checkout, context_files, copy_sources, git_revision
from tests.conftest import REPO
from tests.integration.docker_env import BASE_REF, DOCKER, REASON, REGISTRY, docker

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

TINY = "tests/integration/images/requirements-tiny.lock"


@pytest.fixture(autouse=True)
def _docker_client(monkeypatch):
    monkeypatch.setenv("REPROKIT_DOCKER", DOCKER or "docker")


@pytest.fixture(scope="module")
def kit():
    return load_kit("ep8-crash", REPO / "kits")[0]


def build(kit, image, tmp_path, **kwargs):
    lines: list[str] = []
    base_arg = {"workload": "CUDA_DEVEL_IMAGE", "serve": "SGLANG_IMAGE"}[image]
    built = build_image(kit, image, local_host(), base_overrides={base_arg: BASE_REF}, say=lambda _: None,
                        stream=lines.append, record=False, **kwargs)
    return built, lines


def test_workload_image_builds_pushes_and_pulls_back_by_digest(kit, tmp_path):
    built, log = build(kit, "workload", tmp_path, requirements=TINY, push_to=REGISTRY)
    name, digest = built.repo_digest.split("@")
    assert name == f"{REGISTRY}/reprokit/workload"
    assert digest.startswith("sha256:") and len(digest) == 71
    assert built.bases == {"CUDA_DEVEL_IMAGE": BASE_REF}

    # Forget every local name of the image, then pull it back by digest alone.
    docker("rmi", "-f", built.tag, f"{name}:{built.tag.split(':')[1]}", built.image_id)
    assert docker("image", "inspect", built.image_id, check=False).returncode != 0
    docker("pull", built.repo_digest)
    pulled = json.loads(docker("image", "inspect", built.repo_digest).stdout)[0]
    assert pulled["Id"] == built.image_id
    assert built.repo_digest in pulled["RepoDigests"]

    labels = pulled["Config"]["Labels"]
    assert labels["org.opencontainers.image.revision"] == built.revision == git_revision(
        REPO, ["docker/workload.Dockerfile", *copy_sources((REPO / "docker/workload.Dockerfile").read_text(),
                                                            {"REQUIREMENTS": TINY})])
    assert labels["org.opencontainers.image.base.name"] == BASE_REF
    assert labels["io.reprokit.pins"] == ",".join(f"{k}={v}" for k, v in kit.pins.items())
    assert labels["io.reprokit.kit"] == "ep8-crash" and labels["io.reprokit.image"] == "workload"
    assert pulled["Config"]["User"] == "10001"

    # The image works as the executors use it: `python3 -m reprokit.workloads.<name>`; here there is no GPU, so
    # the probe ends with its own "no driver" code and says so in result.json.
    run = docker("run", "--rm", built.repo_digest, "sh", "-c",
                 "python3 -m reprokit.workloads.smem_probe --out-dir /tmp/out; echo exit=$?; cat /tmp/out/result.json;"
                 " python3 -c 'import packaging, sys; print(packaging.__version__, sys.prefix)';"
                 " test -e /run/secrets/ca_bundle && echo CA-IN-IMAGE || echo no-ca-secret; id -u", check=False)
    out = run.stdout
    assert "exit=3" in out
    result = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert result["workload"] == "smem-probe" and result["status"] == "no_driver"
    tail = out[out.rindex("}") + 1:].split()
    # The hash-pinned wheel came from PyPI into the venv; the CA bundle was a build secret, in no layer.
    assert tail == ["26.0", "/opt/venv", "no-ca-secret", "10001"]
    assert any("pip install" in line and "--require-hashes" in line for line in log)


def test_a_rebuild_without_changes_is_a_cache_hit(kit, tmp_path):
    first, _ = build(kit, "workload", tmp_path, requirements=TINY)
    again, log = build(kit, "workload", tmp_path, requirements=TINY)
    assert again.image_id == first.image_id
    # BuildKit's plain progress: "#7 [4/9] RUN ..." then "#7 CACHED" for a step taken from the cache.
    steps = {m.group(1): m.group(2) for m in (re.match(r"^#(\d+) \[\s*\d+/\d+\] (RUN|COPY) ", line) for line in log) if m}
    cached = {m.group(1) for m in (re.match(r"^#(\d+) CACHED$", line) for line in log) if m}
    assert len(steps) >= 6
    assert set(steps) <= cached, f"steps that ran again: {sorted(set(steps) - cached)}"


def test_serve_image_is_the_base_plus_the_helpers(kit, tmp_path):
    built, _ = build(kit, "serve", tmp_path)
    info = json.loads(docker("image", "inspect", built.image_id).stdout)[0]
    assert info["Config"]["Labels"]["io.reprokit.image"] == "serve"
    assert info["Config"]["Labels"]["org.opencontainers.image.base.name"] == BASE_REF
    out = docker("run", "--rm", built.image_id, "python3", "-c",
                 "import reprokit.workloads.contract as c; print(c.SCHEMA_VERSION, c.__file__)").stdout.split()
    assert out == ["1", "/opt/reprokit/reprokit/workloads/contract.py"]


def test_the_build_context_is_what_the_dockerfile_copies(kit):
    text = (REPO / "docker/workload.Dockerfile").read_text()
    sources = copy_sources(text, {})
    assert sources == ["docker/requirements-workload.lock", "reprokit/__init__.py", "reprokit/workloads"]
    files = context_files(checkout(REPO), ["docker/workload.Dockerfile", *sources])
    assert "reprokit/workloads/contract.py" in files and "reprokit/run/kit_run.py" not in files
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


def test_the_build_records_what_it_built(kit, tmp_path):
    built = build_image(kit, "serve", local_host(), base_overrides={"SGLANG_IMAGE": BASE_REF}, say=lambda _: None,
                        repo_root=REPO, record=False)
    from reprokit.images.build import record_built

    record_built(tmp_path / ".reprokit/images", built)
    assert built_images("local", "ep8-crash", tmp_path / ".reprokit/images") == {"serve": built.image_id}


def test_an_override_must_be_pinned_by_digest(kit):
    with pytest.raises(ConfigError, match="not pinned by digest"):
        build_image(kit, "serve", local_host(), base_overrides={"SGLANG_IMAGE": "debian:bookworm"}, say=lambda _: None,
                    record=False)
