"""What `invoke build` asks a host to run (a recording connection stands in for the host), the context it sends,
and the workload's requirements against the kits' pins."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import tarfile

import pytest

from reprokit.config.inventory import local_host
from reprokit.config.kit import load_kit
from reprokit.errors import ConfigError, HostError
from reprokit.hosts.access import CommandResult
from reprokit.hosts.factory import this_machine
from reprokit.images.build import CA_BUNDLE, build_image, requirement_pins
from reprokit.images.context import ContextSource, checkout, context_files, context_tar, gather
from reprokit.images.lockfile import load_lock
from tests.conftest import REPO

IMAGE_ID = "sha256:" + "c" * 64


class RecordingConnection:
    """The access protocol's ``stream``, answering as a Docker engine would."""

    def __init__(self, ca_present=True, build_rc=0, build_output="#1 DONE"):
        self.calls = []
        self.ca_present = ca_present
        self.build_rc = build_rc
        self.build_output = build_output

    def stream(self, argv, *, stdin=None, env=None, timeout_s=None, on_line=None):
        self.calls.append({"argv": list(argv), "stdin": stdin, "env": dict(env or {})})
        if argv[0] == "test":
            return CommandResult(0 if self.ca_present else 1, "")
        if argv[1] == "build":
            return CommandResult(self.build_rc, self.build_output)
        if argv[1:3] == ["image", "inspect"]:
            return CommandResult(0, IMAGE_ID + "\n")
        raise AssertionError(argv)


@pytest.fixture(scope="module")
def kit():
    return load_kit("ep8-crash", REPO / "kits")[0]


def test_the_build_command(kit, tmp_path):
    target = RecordingConnection()
    built = build_image(kit, "workload", local_host(), connection=target, docker="docker", say=lambda _: None,
                        record=False, docker_host="ssh://gpu@example.org")
    test, build, inspect = target.calls
    assert test["argv"] == ["test", "-s", CA_BUNDLE]
    argv = build["argv"]
    assert argv[:6] == ["docker", "build", "--progress=plain", "-f", "docker/workload.Dockerfile", "-t"]
    assert argv[-3:] == ["--secret", f"id=ca_bundle,src={CA_BUNDLE}", "-"]
    args = dict(argv[i + 1].split("=", 1) for i, word in enumerate(argv) if word == "--build-arg")
    lock = load_lock(REPO / "docker/images.lock.yml")
    assert args["CUDA_DEVEL_IMAGE"] == lock["CUDA_DEVEL_IMAGE"].reference
    assert args["KIT"] == "ep8-crash"
    assert args["PINS"] == "cuda=12.9.1,torch=2.9.1,sglang=0.5.9,flashinfer-python=0.6.3,flashinfer-cubin=0.6.3"
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", args["GIT_REVISION"])
    assert "REQUIREMENTS" not in args  # the Dockerfile's own default: docker/requirements-workload.lock
    assert build["env"] == {"DOCKER_BUILDKIT": "1", "DOCKER_HOST": "ssh://gpu@example.org"}
    with tarfile.open(fileobj=io.BytesIO(build["stdin"])) as tar:
        names = tar.getnames()
    assert names[:2] == ["docker/requirements-workload.lock", "docker/workload.Dockerfile"]
    assert "reprokit/__init__.py" in names and "reprokit/workloads/contract.py" in names
    assert not [n for n in names if n.startswith(("reprokit/images", "reprokit/config", "tests/"))]
    assert inspect["argv"] == ["docker", "image", "inspect", "--format", "{{.Id}}", built.tag]
    assert built.image_id == built.digest == built.reference == IMAGE_ID
    assert built.tag.startswith("reprokit/workload:ep8-crash-")
    assert built.manifest_entry()["digest"] == IMAGE_ID


def test_no_ca_bundle_no_secret(kit):
    target = RecordingConnection(ca_present=False)
    build_image(kit, "serve", local_host(), connection=target, docker="docker", say=lambda _: None, record=False)
    assert "--secret" not in target.calls[1]["argv"]


def test_failures_say_what_to_do(kit):
    target = RecordingConnection(build_rc=1, build_output="ERROR: BuildKit is enabled but the buildx component is missing")
    with pytest.raises(HostError, match="this docker client has no BuildKit"):
        build_image(kit, "serve", local_host(), connection=target, docker="docker", say=lambda _: None, record=False)
    target = RecordingConnection(build_rc=127, build_output="docker: command not found")
    with pytest.raises(HostError, match="docker is not installed on host 'local'; `invoke provision --host local`"):
        build_image(kit, "serve", local_host(), connection=target, docker="docker", say=lambda _: None, record=False)


def test_bad_requests_are_refused_before_anything_runs(kit):
    target = RecordingConnection()
    with pytest.raises(ConfigError, match="declares no image 'nope'; images: workload, serve"):
        build_image(kit, "nope", local_host(), connection=target)
    with pytest.raises(ConfigError, match="takes no base from OTHER_IMAGE"):
        build_image(kit, "serve", local_host(), connection=target, base_overrides={"OTHER_IMAGE": "a@sha256:" + "1" * 64})
    remote = local_host().__class__(**{**local_host().__dict__, "name": "gpu1", "connection": "ssh", "local": False})
    with pytest.raises(HostError, match="needs its connection"):
        build_image(kit, "serve", remote)
    assert target.calls == []


def test_the_context_tar_is_deterministic():
    files = ["reprokit/__init__.py", "reprokit/workloads/contract.py"]
    first, second = context_tar(checkout(REPO), files), context_tar(checkout(REPO), files)
    assert first == second
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = tar.getmembers()
    assert [(m.name, m.mtime, m.uid, m.mode) for m in members] == [(f, 0, 0, 0o644) for f in files]


def test_this_machines_connection_feeds_stdin_and_streams_lines():
    lines, here = [], this_machine()
    result = here.stream(["sh", "-c", "cat; echo done >&2"], stdin=b"one\ntwo\n", on_line=lines.append)
    assert (result.returncode, lines) == (0, ["one", "two", "done"])
    assert here.stream(["/nonexistent/docker"]).returncode == 127
    with pytest.raises(HostError, match="did not finish within 1 s"):
        here.stream(["sleep", "5"], timeout_s=1)


def test_workload_requirements_are_the_kits_pins_hash_pinned():
    lock = REPO / "docker/requirements-workload.lock"
    pins = requirement_pins(lock)
    for name in ("ep8-crash", "tile-sweep", "smem-probe"):
        kit = load_kit(name, REPO / "kits")[0]
        for package in ("torch", "flashinfer-python", "flashinfer-cubin"):
            if package in kit.pins:
                assert pins[package] == kit.pins[package], (name, package)
    # Every requirement carries at least one sha256 (pip's --require-hashes refuses the file otherwise).
    blocks = re.split(r"\n(?=[a-z0-9])", lock.read_text().split("\n", 2)[2])
    assert len(blocks) == len(pins) > 40
    assert all("--hash=sha256:" in block for block in blocks)


def test_the_tiny_test_requirements_are_a_subset_of_the_real_ones():
    real = (REPO / "docker/requirements-workload.lock").read_text()
    tiny = (REPO / "tests/integration/images/requirements-tiny.lock").read_text()
    body = "".join(line + "\n" for line in tiny.splitlines() if not line.startswith("#"))
    assert body.startswith("packaging==") and body in real


def test_an_installed_copy_sends_the_packages_workloads_and_names_the_image_by_version_and_context(tmp_path):
    """As ``pipx install`` lays it out: docker/ under the wheel's shipped/, reprokit/ where the package is."""
    (tmp_path / "shipped" / "docker").mkdir(parents=True)
    shutil.copy(REPO / "docker" / "serve.Dockerfile", tmp_path / "shipped" / "docker")
    installed = ContextSource(tmp_path / "shipped", REPO, git=False)
    paths = ["docker/serve.Dockerfile", "reprokit/__init__.py", "reprokit/workloads"]
    context = gather(installed, paths)
    assert context.files == context_files(checkout(REPO), paths)  # the same files a checkout sends
    assert context.revision == f"0.1.0-{hashlib.sha256(context.tar).hexdigest()[:12]}" == context.short
    assert gather(installed, paths) == context  # same files, same tar, same name
    with pytest.raises(ConfigError) as caught:
        gather(installed, ["docker/requirements-workload.lock"])
    assert str(caught.value) == ("the Dockerfile copies 'docker/requirements-workload.lock', which is not in the installed"
                                 f" package ({tmp_path}/shipped/docker/requirements-workload.lock)")
