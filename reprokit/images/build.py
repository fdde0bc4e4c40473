"""Build a kit's image on a host, from this checkout or this installed reprokit, and say which image it is.

The build context is made here (``reprokit.images.context``: exactly the files the Dockerfile copies) and fed to
``docker build -`` on the host: nothing needs to be checked out there, and the same commands work locally, through
``DOCKER_HOST`` or over SSH. Every base comes from
``docker/images.lock.yml`` as ``tag@digest``; the kit's pins, the kit and the git revision become labels;
the host's CA bundle, if it has one, is a build secret for pip (mounted for one ``RUN``, in no layer).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from reprokit.config import layers
from reprokit.config.inventory import Host
from reprokit.config.kit import Kit
from reprokit.errors import ConfigError, HostError
from reprokit.hosts.access import CommandResult, Connection
from reprokit.hosts.factory import this_machine
from reprokit.images import dockerfile as dockerfile_rules
from reprokit.images.context import ContextSource, arg_defaults, checkout, copy_sources, default_source, gather
from reprokit.images.lockfile import DIGEST_RE, LOCK_PATH, BaseImage, load_lock
from reprokit.output.say import Say, silent
from reprokit.records.atomic import write_json_atomic

REPO_ROOT = layers.builtin_root()  # docker/ of the checkout, or of the installed package (its Dockerfiles and locks)
STATE_DIR = Path(".reprokit/images")  # under a checkout given as repo_root: what `invoke build` built, per host
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian's and Ubuntu's; passed as the build secret `ca_bundle`
BUILD_TIMEOUT_S = 3 * 3600  # a cold workload build downloads several GB of CUDA wheels
SHORT_TIMEOUT_S = 120


def docker_cli() -> str:
    """The docker client to run: ``REPROKIT_DOCKER`` if set (it must have BuildKit), else ``docker`` on the PATH."""
    return os.environ.get("REPROKIT_DOCKER", "docker")


@dataclass
class BuiltImage:
    """One image as built on one host: what the run manifest records of it."""

    kit: str
    image: str
    host: str
    dockerfile: str
    tag: str
    image_id: str  # sha256 of the image config: the identity of the image on the host
    revision: str
    bases: dict[str, str] = field(default_factory=dict)  # build argument -> tag@digest
    repo_digest: str | None = None  # registry/name@sha256:... once pushed
    build_s: float = 0.0

    @property
    def reference(self) -> str:
        """What `docker run` should name: the pushed digest when there is one, else the local image id."""
        return self.repo_digest or self.image_id

    @property
    def digest(self) -> str:
        return self.repo_digest.rsplit("@", 1)[1] if self.repo_digest else self.image_id

    def manifest_entry(self) -> dict:
        return {"dockerfile": self.dockerfile, "digest": self.digest, "reference": self.reference, "tag": self.tag,
                "image_id": self.image_id, "repo_digest": self.repo_digest, "bases": dict(self.bases),
                "revision": self.revision}


# -- what goes into the build ------------------------------------------------------------------------

def requirement_pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file, by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line.strip())
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def check_requirements_match_pins(kit: Kit, path: Path, shown: str) -> None:
    installed = requirement_pins(path)
    for name, version in kit.pins.items():
        have = installed.get(canonicalize_name(name))
        if have is not None and have != version:
            raise ConfigError(f"{shown}: pins {name}=={have}, but kit '{kit.kit}' pins {name} {version};"
                              " re-lock the requirements (command in its header) or change the kit")


# -- the build -------------------------------------------------------------------------------------

def _fail(host_name: str, what: str, result: CommandResult) -> HostError:
    text = result.output
    if result.returncode == 127:
        hint = f"docker is not installed on host '{host_name}'; `invoke provision --host {host_name}` installs it"
    elif "buildx component is missing" in text or "BuildKit is enabled but" in text:
        hint = ("this docker client has no BuildKit (buildx); install docker-buildx-plugin, or set REPROKIT_DOCKER to a"
                " client that has it (Debian's /usr/bin/docker does)")
    elif "Cannot connect to the Docker daemon" in text or "permission denied while trying to connect" in text:
        hint = f"the Docker daemon on host '{host_name}' is not running or not reachable for this user"
    else:
        hint = f"last lines:\n{result.tail()}"
    return HostError(f"host '{host_name}': {what} failed (exit {result.returncode}): {hint}")


def build_image(
    kit: Kit,
    image_name: str,
    host: Host,
    *,
    repo_root: Path | None = None,
    lock_path: Path = LOCK_PATH,
    connection: Connection | None = None,
    docker: str | None = None,
    docker_host: str | None = None,
    base_overrides: dict[str, str] | None = None,
    requirements: str | None = None,
    push_to: str | None = None,
    say: Say = silent,
    stream: Callable[[str], None] | None = None,
    record: bool = True,
) -> BuiltImage:
    """Build ``kit``'s image ``image_name`` on ``host`` and return what was built (its digest included).

    ``connection`` runs each command on the host (``stream``): a remote host's is given, the local host's is this
    machine's. ``docker_host`` targets another engine from here (``DOCKER_HOST``). ``base_overrides``
    replaces bases of the lock (build argument -> ``name@sha256:...``, digest-pinned too); ``requirements``
    replaces the Dockerfile's requirements file (tests use a tiny one). ``push_to`` (``registry[:port]``)
    pushes the image and returns its registry digest. ``repo_root``: a checkout to build from (default: this
    reprokit's own checkout, or its installed package).
    """
    spec = kit.images.get(image_name)
    if spec is None:
        known = ", ".join(kit.images) or "(none)"
        raise ConfigError(f"kit '{kit.kit}' declares no image '{image_name}'; images: {known}")
    if connection is None:
        if not host.is_local:
            raise HostError(f"host '{host.name}': building on a remote host needs its connection (reprokit.hosts);"
                            " or build here against its engine with docker_host=ssh://...")
        connection = this_machine()
    docker = docker or docker_cli()
    source: ContextSource = checkout(repo_root) if repo_root else default_source()
    dockerfile = spec.dockerfile
    text = (source.root / dockerfile).read_text(encoding="utf-8")
    lock = load_lock(source.root / lock_path)
    broken = dockerfile_rules.problems(dockerfile, text, lock)
    if broken:
        raise ConfigError("; ".join(broken))

    bases = _pinned_bases(dockerfile, text, lock, base_overrides)
    build_args = dict(bases)
    build_args.update(spec.build_args)
    if requirements:
        build_args["REQUIREMENTS"] = requirements
    defaults = arg_defaults(text)
    if "REQUIREMENTS" in defaults and not requirements:
        check_requirements_match_pins(kit, source.root / defaults["REQUIREMENTS"], defaults["REQUIREMENTS"])
    context = gather(source, [dockerfile, *copy_sources(text, build_args)])
    revision = context.revision
    build_args.update(GIT_REVISION=revision, KIT=kit.kit, PINS=",".join(f"{k}={v}" for k, v in kit.pins.items()))
    tag = f"reprokit/{image_name}:{kit.kit}-{context.short}"

    env = {"DOCKER_BUILDKIT": "1"}
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    argv = _build_argv(docker, dockerfile, tag, spec.target, build_args, connection, env)

    say(f"building {image_name} of kit {kit.kit} on {host.name}: {dockerfile}, {len(context.files)} files, bases "
        + ", ".join(f"{k}={v}" for k, v in bases.items()))
    started = time.monotonic()
    result = connection.stream(argv, stdin=context.tar, env=env, timeout_s=BUILD_TIMEOUT_S, on_line=stream)
    if result.returncode != 0:
        raise _fail(host.name, f"docker build of {image_name}", result)
    build_s = time.monotonic() - started
    inspect = connection.stream([docker, "image", "inspect", "--format", "{{.Id}}", tag], env=env, timeout_s=SHORT_TIMEOUT_S)
    if inspect.returncode != 0:
        raise _fail(host.name, f"docker image inspect {tag}", inspect)
    built = BuiltImage(kit.kit, image_name, host.name, dockerfile, tag, inspect.output.strip().splitlines()[-1], revision,
                       bases, build_s=round(build_s, 3))
    if push_to:
        built.repo_digest = push_image(built, push_to, connection, docker, env)
    say(f"built {tag} ({built.image_id}) in {build_s:.1f} s" + (f", pushed as {built.repo_digest}" if built.repo_digest else ""))
    if record:
        record_built(repo_root / STATE_DIR if repo_root else layers.images_state_dir(), built)
    return built


def _pinned_bases(dockerfile: str, text: str, lock: dict[str, BaseImage], base_overrides: dict[str, str] | None) -> dict[str, str]:
    """Each ``FROM ${ARG}`` base of the Dockerfile: the lock's digest-pinned reference, or an override pinned too."""
    overrides = dict(base_overrides or {})
    bases: dict[str, str] = {}
    for arg in dockerfile_rules.from_args(text):
        ref = overrides.pop(arg, None) or lock[arg].reference
        if not re.search(r"@" + DIGEST_RE.pattern + "$", ref):
            raise ConfigError(f"base override {arg}={ref} is not pinned by digest; give name@sha256:...")
        bases[arg] = ref
    if overrides:
        raise ConfigError(f"{dockerfile} takes no base from {', '.join(overrides)}; its bases: {', '.join(bases)}")
    return bases


def _build_argv(docker: str, dockerfile: str, tag: str, stage: str | None, build_args: dict[str, str],
                connection: Connection, env: dict[str, str]) -> list[str]:
    """``docker build`` reading the context from stdin; the host's CA bundle as a build secret when it has one."""
    argv = [docker, "build", "--progress=plain", "-f", dockerfile, "-t", tag]
    if stage:
        argv += ["--target", stage]
    for key, value in build_args.items():
        argv += ["--build-arg", f"{key}={value}"]
    if connection.stream(["test", "-s", CA_BUNDLE], env=env, timeout_s=SHORT_TIMEOUT_S).returncode == 0:
        argv += ["--secret", f"id=ca_bundle,src={CA_BUNDLE}"]
    return argv + ["-"]


def push_image(built: BuiltImage, registry: str, connection: Connection, docker: str, env: dict[str, str]) -> str:
    """Push to ``registry`` and return ``registry/name@sha256:...``, the reference any host can pull by."""
    name = f"{registry}/{built.tag.split(':', 1)[0]}"
    remote_tag = f"{name}:{built.tag.split(':', 1)[1]}"
    for argv, what in (([docker, "tag", built.image_id, remote_tag], "docker tag"),
                       ([docker, "push", remote_tag], f"docker push to {registry}")):
        result = connection.stream(argv, env=env, timeout_s=BUILD_TIMEOUT_S)
        if result.returncode != 0:
            raise _fail(built.host, what, result)
    inspect = connection.stream([docker, "image", "inspect", "--format", "{{json .RepoDigests}}", remote_tag], env=env,
                     timeout_s=SHORT_TIMEOUT_S)
    if inspect.returncode != 0:
        raise _fail(built.host, f"docker image inspect {remote_tag}", inspect)
    for ref in json.loads(inspect.output.strip().splitlines()[-1]):
        if ref.startswith(name + "@"):
            return ref
    raise HostError(f"pushed {remote_tag}, but the engine records no digest for {name}")


# -- what was built where ---------------------------------------------------------------------------

def record_built(state_dir: Path, built: BuiltImage) -> None:
    """Remember the image per host and kit (``<state_dir>/<host>.json``) for later runs there."""
    path = state_dir / f"{built.host}.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.setdefault(built.kit, {})[built.image] = asdict(built) | {"reference": built.reference}
    write_json_atomic(path, data)


def built_images(host_name: str, kit_name: str, state_dir: Path | None = None) -> dict[str, str]:
    """The references `invoke build --host` last built for ``kit_name`` on ``host_name``: image name -> reference."""
    path = (state_dir or layers.images_state_dir()) / f"{host_name}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: entry["reference"] for name, entry in (data.get(kit_name) or {}).items()}
