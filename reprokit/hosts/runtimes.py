"""How a workload's command is built on an SSH host: natively, or in a Docker container.

The one difference between the two runtimes is here: the command line, what must be checked on the host
before a run, how the secrets file is written, and what outlives a step's session and must be removed after
it (a container). Launching, following and stopping the step are the same for both (``detached.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import shell, staging
from reprokit.hosts.executor import workload_argv
from reprokit.hosts.transport import Transport

CONTAINER_CODE_DIR = "/opt/reprokit"
USER_IDS = "$(id -u):$(id -g)"  # expanded by the host's shell: the container runs as the SSH user
SECRETS_DIR = "/run/reprokit-secrets"  # a tmpfs in the container: secrets as read-only files, never its environment
SECRETS_TMPFS = f"{SECRETS_DIR}:rw,noexec,nosuid,size=1m,mode=0700,uid=$(id -u),gid=$(id -g)"
# the container's first process: the NAME=value lines on its stdin become files NAME (mode 0400), then the workload
SECRETS_ENTRY = ('umask 077; while IFS= read -r line; do [ -n "$line" ] && printf %s "${line#*=}" > "$0/${line%%=*}";'
                 ' done; chmod 0400 "$0"/* 2>/dev/null; exec "$@"')


@dataclass(frozen=True)
class StepPlace:
    """What a step's command line needs to know of its run on the host."""

    run_id: str
    step_name: str
    remote_dir: str
    code_dir: str
    models_present: bool  # the host has its models_dir
    with_secrets: bool


class Runtime(Protocol):
    secrets_file: str  # the name the wrapper reads the secrets from, in the step's directory
    secrets_for_shell: bool  # a shell script to source (native) or docker's --env-file form

    def check(self, transport: Transport) -> None:
        """Refuse the host before anything is written when the runtime cannot run the kit there."""

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        """The shell command that runs ``module`` for ``place``; every value quoted."""

    def cleanup(self, place: StepPlace) -> str:
        """A shell command that ends what outlives the step's session (empty: nothing does)."""


@dataclass
class NativeRuntime:
    """The host's own Python, the shipped code on its path."""

    host: Host
    secrets_file: str = ".secrets.sh"
    secrets_for_shell: bool = True

    def check(self, transport: Transport) -> None:
        """The interpreter is found when the first step runs; nothing to check ahead."""

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        return shell.join(["env", f"PYTHONPATH={place.code_dir}", "PYTHONUNBUFFERED=1",
                           *staging.cache_env(self.host, ("REPROKIT_CACHE",)),
                           *workload_argv(self.host.python, module, "params.json", ".")])

    def cleanup(self, place: StepPlace) -> str:
        return ""


@dataclass
class DockerRuntime:
    """``docker run`` of the step's image: the step directory at /out, the code read-only, the caches mounted."""

    host: Host
    images: dict[str, str] = field(default_factory=dict)  # kit image name -> image reference on the host
    secrets_file: str = ".secrets.env"
    secrets_for_shell: bool = False

    def check(self, transport: Transport) -> None:
        name = self.host.name
        code, _, err = transport.sh("docker version --format '{{.Server.Version}}'", check=False)
        if code != 0:
            raise HostError(f"host '{name}': runtime is docker but `docker version` failed: "
                            f"{err.strip().splitlines()[-1] if err.strip() else 'no output'}; run `invoke provision --host {name}`")
        for image, ref in sorted(self.images.items()):
            code, _, _ = transport.sh(f"docker image inspect --format '{{{{.Id}}}}' {shell.quote(ref)}", check=False)
            if code != 0:
                raise HostError(f"host '{name}': image '{image}' ({ref}) is not on the host; build it with"
                                f" `invoke build --host {name}` (or pass --image {image}=REF of one that is)")

    @staticmethod
    def container_name(place: StepPlace) -> str:
        return f"{place.run_id}-{place.step_name}"

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        name = self.host.name
        if not image:
            raise HostError(f"host '{name}' runs workloads in Docker, but the step names no image")
        ref = self.images.get(image)
        if not ref:
            raise HostError(f"host '{name}': no image reference for '{image}'; build it (`invoke build --host"
                            f" {name}`) or pass --image {image}=REF")
        docker = [
            "docker", "run", "--rm", "--name", self.container_name(place), "--label", f"reprokit.run={place.run_id}",
            "--ipc=host", f"--shm-size={self.host.container_shm_size}",
            *[arg for ulimit, value in self.host.container_ulimits for arg in ("--ulimit", f"{ulimit}={value}")],
            "--user", USER_IDS, "-v", f"{place.remote_dir}:{staging.CONTAINER_STEP_DIR}",
            "-v", f"{place.code_dir}:{CONTAINER_CODE_DIR}:ro", "-w", staging.CONTAINER_STEP_DIR,
            "-e", f"PYTHONPATH={CONTAINER_CODE_DIR}", "-e", "PYTHONUNBUFFERED=1",
            "-e", "HOME=/tmp",  # the host's uid may have no home in the image; the caches are mounted below
            *staging.container_mounts(self.host, place.models_present),
        ]
        if not self.host.cpu_only:
            docker += ["--gpus", "all"]
        workload = workload_argv("python3", module, f"{staging.CONTAINER_STEP_DIR}/params.json", staging.CONTAINER_STEP_DIR)
        if not place.with_secrets:
            return " ".join(a if a == USER_IDS else shell.quote(a) for a in [*docker, ref, *workload])
        # docker inspect (Config.Env) and /proc/1/environ show a container's environment: the secrets go in as files
        # of a tmpfs, read from the descriptor the wrapper opened on .secrets.env (and deleted) before docker starts
        docker += ["-i", "--tmpfs", SECRETS_TMPFS, "-e", f"HF_TOKEN_PATH={SECRETS_DIR}/HF_TOKEN",
                   ref, "sh", "-c", SECRETS_ENTRY, SECRETS_DIR, *workload]
        inner = " ".join(a if a in (USER_IDS, SECRETS_TMPFS) else shell.quote(a) for a in docker) + " 0<&3"
        return shell.join(["sh", "-c", inner])  # the wrapper's `< /dev/null` is for sh; docker reads descriptor 3

    def cleanup(self, place: StepPlace) -> str:
        return f"docker rm -f {shell.quote(self.container_name(place))} >/dev/null 2>&1"


def runtime_for(host: Host, images: dict[str, str]) -> NativeRuntime | DockerRuntime:
    return DockerRuntime(host, dict(images)) if host.runtime == "docker" else NativeRuntime(host)


__all__ = ["DockerRuntime", "NativeRuntime", "Runtime", "StepPlace", "runtime_for"]
