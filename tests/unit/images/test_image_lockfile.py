"""docker/images.lock.yml: its entries, the errors for a malformed one (file:line), image references, and
`invoke lock` rewriting it from a registry (here a fake one; the real registry is in tests/integration/images)."""

from __future__ import annotations

import io
import re
import urllib.error
from email.message import Message

import pytest

from reprokit.config.kit import load_kit
from reprokit.errors import ConfigError, HostError
from reprokit.images.digest_lock import lock_images
from reprokit.images.lockfile import BaseImage, load_lock, parse_reference, write_lock
from reprokit.images.registry import resolve_digest
from tests.conftest import REPO

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


def test_the_repository_lock():
    lock = load_lock(REPO / "docker/images.lock.yml")
    assert list(lock) == ["CUDA_DEVEL_IMAGE", "SGLANG_IMAGE", "CUDA_BASE_IMAGE", "VLLM_CPU_BASE_IMAGE"]
    assert all(image.pinned for image in lock.values())
    kit = load_kit("ep8-crash", REPO / "kits")[0]
    # The CUDA bases are the kit's CUDA (12.8 or newer: Blackwell); the serve base is the kit's sglang release.
    for arg in ("CUDA_DEVEL_IMAGE", "CUDA_BASE_IMAGE"):
        version = re.match(r"nvidia/cuda:(\d+\.\d+\.\d+)-", lock[arg].tag).group(1)
        assert version == kit.pins["cuda"]
        assert tuple(int(x) for x in version.split(".")[:2]) >= (12, 8)
    assert lock["CUDA_DEVEL_IMAGE"].tag.endswith("-devel-ubuntu24.04")
    assert lock["SGLANG_IMAGE"].tag == f"lmsysorg/sglang:v{kit.pins['sglang']}"
    assert lock["CUDA_DEVEL_IMAGE"].reference == lock["CUDA_DEVEL_IMAGE"].tag + "@" + lock["CUDA_DEVEL_IMAGE"].digest


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("    digest: null\n", "tmp.yml:3: 'X_IMAGE' needs a 'tag'"),
        ("    tag: debian:latest\n", "tmp.yml:4: 'debian:latest' names no version"),
        ("    tag: debian\n", "tmp.yml:4: 'debian' names no version"),
        ("    tag: debian:12@" + D1 + "\n", "tmp.yml:4: write the digest under 'digest'"),
        ("    tag: debian:12\n    digest: md5:abc\n", "tmp.yml:5: digest must be sha256:<64 hex digits> or null"),
        ("    tag: debian:12\n    digets: null\n", "tmp.yml:5: unknown key 'digets' in 'X_IMAGE'"),
        ("    tag: Debian:12\n", "tmp.yml:4: not an image reference: 'Debian:12'"),
    ],
)
def test_a_malformed_entry_is_named_with_its_line(tmp_path, entry, message):
    path = tmp_path / "tmp.yml"
    path.write_text("reprokit_base_images:\n  # x\n  X_IMAGE:\n" + entry)
    with pytest.raises(ConfigError) as err:
        load_lock(path)
    assert str(err.value).startswith(f"{path}:{message.split(':', 1)[1]}"), str(err.value)


def test_write_keeps_the_header_and_round_trips(tmp_path):
    path = tmp_path / "images.lock.yml"
    path.write_text("# line one\n# line two\nreprokit_base_images:\n  A_IMAGE:\n    tag: a/b:1\n    digest: null\n")
    images = load_lock(path)
    images["A_IMAGE"] = BaseImage("A_IMAGE", "a/b:1", D1, "test")
    write_lock(path, images)
    assert path.read_text() == (
        "# line one\n# line two\nreprokit_base_images:\n  A_IMAGE:\n    tag: a/b:1\n"
        f"    digest: {D1}\n    source: test\n")
    assert load_lock(path)["A_IMAGE"].digest == D1


@pytest.mark.parametrize(
    ("text", "registry", "api_host", "repository", "tag", "digest"),
    [
        ("nvidia/cuda:12.9.1-devel-ubuntu24.04", "docker.io", "registry-1.docker.io", "nvidia/cuda", "12.9.1-devel-ubuntu24.04", None),
        ("ubuntu:24.04", "docker.io", "registry-1.docker.io", "library/ubuntu", "24.04", None),
        ("127.0.0.1:5000/reprokit-test/bookworm:base", "127.0.0.1:5000", "127.0.0.1:5000", "reprokit-test/bookworm", "base", None),
        ("localhost/x:y", "localhost", "localhost", "x", "y", None),
        ("nvcr.io/nvidia/cuda@" + D1, "nvcr.io", "nvcr.io", "nvidia/cuda", None, D1),
        ("lmsysorg/sglang:v0.5.9@" + D2, "docker.io", "registry-1.docker.io", "lmsysorg/sglang", "v0.5.9", D2),
    ],
)
def test_image_references(text, registry, api_host, repository, tag, digest):
    ref = parse_reference(text)
    assert (ref.registry, ref.api_host, ref.repository, ref.tag, ref.digest) == (registry, api_host, repository, tag, digest)


def _lock(tmp_path, digest="null", source="''"):
    path = tmp_path / "images.lock.yml"
    path.write_text(f"# header\nreprokit_base_images:\n  A_IMAGE:\n    tag: example.org/a/b:1\n    digest: {digest}\n"
                    f"    source: {source}\n")
    return path


def test_lock_rewrites_digest_and_source(tmp_path):
    path = _lock(tmp_path)
    changes = lock_images(path, resolve=lambda tag: D1, say=lambda _: None, today="2026-11-29")
    assert [(c.arg, c.tag, c.old, c.new, c.changed) for c in changes] == [("A_IMAGE", "example.org/a/b:1", None, D1, True)]
    image = load_lock(path)["A_IMAGE"]
    assert (image.digest, image.source) == (D1, "invoke lock, example.org, 2026-11-29")
    assert path.read_text().startswith("# header\n")


def test_lock_leaves_a_confirmed_digest_byte_for_byte(tmp_path):
    path = _lock(tmp_path, D1, "invoke lock, example.org, 2026-01-01")
    before = path.read_bytes()
    lock_images(path, resolve=lambda tag: D1, say=lambda _: None, today="2026-11-29")
    assert path.read_bytes() == before


def test_lock_writes_nothing_when_a_tag_cannot_be_resolved(tmp_path):
    path = _lock(tmp_path)
    path.write_text(path.read_text() + "  B_IMAGE:\n    tag: example.org/c:2\n    digest: null\n")
    before = path.read_bytes()

    def resolve(tag):
        if tag.endswith("c:2"):
            raise HostError("example.org/c:2: the registry example.org has no such tag (404); check the tag")
        return D1

    with pytest.raises(HostError, match="no such tag"):
        lock_images(path, resolve=resolve, say=lambda _: None)
    assert path.read_bytes() == before


def test_lock_refuses_unknown_entries(tmp_path):
    with pytest.raises(ConfigError, match="no entry NOPE; entries: A_IMAGE"):
        lock_images(_lock(tmp_path), only=["NOPE"], resolve=lambda tag: D1, say=lambda _: None)


class FakeRegistry:
    """Docker Hub's dance: 401 with a Bearer challenge, an anonymous token, then the digest header."""

    def __init__(self, status_after_token=200):
        self.requests = []
        self.status_after_token = status_after_token

    def __call__(self, request, timeout_s):
        self.requests.append((request.get_method(), request.full_url, dict(request.header_items())))
        if request.full_url.startswith("https://auth.example/token"):
            return _Response(b'{"token": "T0K"}', {})
        if "Authorization" not in request.headers or self.status_after_token == 401:
            headers = Message()
            headers["WWW-Authenticate"] = 'Bearer realm="https://auth.example/token",service="reg",scope="repository:nvidia/cuda:pull"'
            raise urllib.error.HTTPError(request.full_url, 401, "Unauthorized", headers, io.BytesIO())
        if self.status_after_token != 200:
            raise urllib.error.HTTPError(request.full_url, self.status_after_token, "Not Found", Message(), io.BytesIO())
        return _Response(b"", {"Docker-Content-Digest": D2})


class _Response(io.BytesIO):
    def __init__(self, body, headers):
        super().__init__(body)
        self.headers = headers


def test_resolve_follows_the_token_challenge():
    registry = FakeRegistry()
    assert resolve_digest("nvidia/cuda:12.9.1-devel-ubuntu24.04", open_url=registry) == D2
    methods = [(m, url.split("?")[0]) for m, url, _ in registry.requests]
    assert methods == [
        ("HEAD", "https://registry-1.docker.io/v2/nvidia/cuda/manifests/12.9.1-devel-ubuntu24.04"),
        ("GET", "https://auth.example/token"),
        ("HEAD", "https://registry-1.docker.io/v2/nvidia/cuda/manifests/12.9.1-devel-ubuntu24.04"),
    ]
    assert registry.requests[1][1] == "https://auth.example/token?service=reg&scope=repository%3Anvidia%2Fcuda%3Apull"
    assert registry.requests[2][2]["Authorization"] == "Bearer T0K"
    assert "application/vnd.oci.image.index.v1+json" in registry.requests[0][2]["Accept"]


def test_resolve_says_when_the_tag_does_not_exist():
    with pytest.raises(HostError, match=r"registry-1.docker.io has no such tag \(404\)"):
        resolve_digest("nvidia/cuda:0.0-nope", open_url=FakeRegistry(status_after_token=404))


def test_a_registry_that_refuses_its_own_anonymous_token_is_asked_once_more_no_more():
    registry = FakeRegistry(status_after_token=401)
    with pytest.raises(HostError) as refused:
        resolve_digest("nvidia/cuda:12.9.1-devel-ubuntu24.04", open_url=registry)
    assert str(refused.value) == ("nvidia/cuda:12.9.1-devel-ubuntu24.04: the registry registry-1.docker.io refused the"
                                  " anonymous token; log in or check the name")
    assert [(m, url.split("?")[0].rsplit("/", 1)[-1]) for m, url, _ in registry.requests] == [
        ("HEAD", "12.9.1-devel-ubuntu24.04"), ("GET", "token"), ("HEAD", "12.9.1-devel-ubuntu24.04")]


def test_loopback_registries_are_spoken_to_over_http():
    registry = FakeRegistry()
    resolve_digest("127.0.0.1:5000/a/b:1", open_url=registry)
    assert registry.requests[0][1] == "http://127.0.0.1:5000/v2/a/b/manifests/1"
