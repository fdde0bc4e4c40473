"""Resolve a tag to the digest it points to now, over a registry's HTTP API v2 (standard library only).

``HEAD /v2/<repository>/manifests/<tag>`` answers the digest in ``Docker-Content-Digest``; Docker Hub and
most public registries first answer 401 with a ``WWW-Authenticate: Bearer realm=...`` challenge, for which
an anonymous pull token is fetched. The digest is that of what the tag names: for a multi-platform image,
the index (so one pin serves every platform). Loopback registries are spoken to over plain HTTP, as
Docker itself does.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from reprokit.errors import HostError
from reprokit.hosts.retry import Retry
from reprokit.images.lockfile import DIGEST_RE, parse_reference

MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
])
TIMEOUT_S = 30.0

Opener = Callable[[urllib.request.Request, float], "urllib.response.addinfourl"]


def _default_open(request: urllib.request.Request, timeout_s: float):
    return urllib.request.urlopen(request, timeout=timeout_s)  # noqa: S310 (http(s) only, built below)


def is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _bearer_challenge(header: str) -> dict[str, str]:
    if not header.lower().startswith("bearer "):
        return {}
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def _challenge_of(exc: BaseException) -> dict[str, str]:
    """The Bearer challenge of a 401 (realm, service, scope), or nothing: the answer that asks for a token."""
    if not isinstance(exc, urllib.error.HTTPError) or exc.code != 401:
        return {}
    return _bearer_challenge(exc.headers.get("WWW-Authenticate", ""))


# A registry that asks for a token is asked once more with an anonymous one; nothing else is asked again here
# (an unreachable registry is the operator's to fix, and `invoke lock` is run by hand).
TOKEN_DANCE = Retry(attempts=2, transient=lambda exc: bool(_challenge_of(exc)))


def _token(challenge: dict[str, str], open_url: Opener, timeout_s: float) -> str:
    query = {k: v for k, v in challenge.items() if k in ("service", "scope")}
    url = challenge["realm"] + ("?" + urllib.parse.urlencode(query) if query else "")
    with open_url(urllib.request.Request(url), timeout_s) as response:
        data = json.loads(response.read().decode("utf-8"))
    token = data.get("token") or data.get("access_token")
    if not token:
        raise HostError(f"the registry's token service ({challenge['realm']}) gave no token")
    return token


def resolve_digest(reference: str, timeout_s: float = TIMEOUT_S, open_url: Opener = _default_open) -> str:
    """The digest ``reference`` (``[registry/]name:tag``) points to now; HostError when the registry cannot say."""
    ref = parse_reference(reference)
    if not ref.tag:
        raise HostError(f"{reference}: no tag to resolve")
    scheme = "http" if is_loopback(ref.api_host) else "https"
    url = f"{scheme}://{ref.api_host}/v2/{ref.repository}/manifests/{ref.tag}"
    headers = {"Accept": MANIFEST_TYPES}

    def ask(_: int) -> str:
        request = urllib.request.Request(url, headers=headers, method="HEAD")
        with open_url(request, timeout_s) as response:
            digest = response.headers.get("Docker-Content-Digest")
            if digest and DIGEST_RE.fullmatch(digest):
                return digest
        # Some registries omit the header on HEAD: hash the manifest itself.
        with open_url(urllib.request.Request(url, headers=headers), timeout_s) as response:
            return "sha256:" + hashlib.sha256(response.read()).hexdigest()

    def log_in(exc: BaseException, _: float) -> None:
        assert isinstance(exc, urllib.error.HTTPError)
        headers["Authorization"] = f"Bearer {_token(_challenge_of(exc), open_url, timeout_s)}"

    try:
        return TOKEN_DANCE.run(ask, log_in)
    except urllib.error.HTTPError as exc:
        if _challenge_of(exc) and "Authorization" in headers:
            raise HostError(f"{reference}: the registry {ref.api_host} refused the anonymous token; log in or check the name") from None
        if exc.code == 404:
            raise HostError(f"{reference}: the registry {ref.api_host} has no such tag (404); check the tag") from None
        raise HostError(f"{reference}: the registry {ref.api_host} answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise HostError(f"{reference}: cannot reach the registry {ref.api_host} ({reason}); `invoke lock` needs it") from None
