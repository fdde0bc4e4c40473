"""``docker run`` of the step's image, on any host with a Docker engine (this machine included)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import host_files, shell
from reprokit.hosts.access.base import Connection
from reprokit.hosts.executor import workload_argv
from reprokit.hosts.runtimes.base import CONTAINER_CODE_DIR, StepPlace
from reprokit.hosts.shell_scripts import library

USER_IDS = "$(id -u):$(id -g)"  # expanded by the host's shell: the container runs as the host's user
SECRETS_DIR = "/run/reprokit-secrets"  # a tmpfs in the container: secrets as read-only files, never its environment
SECRETS_TMPFS = f"{SECRETS_DIR}:rw,noexec,nosuid,size=1m,mode=0700,uid=$(id -u),gid=$(id -g)"
SECRETS_ENTRY = library("container_secrets.sh")  # the container's first process: the secrets as files, then the workload


@dataclass
class DockerRuntime:
    """``docker run`` of the step's image: the step directory at /out, the code read-only, the caches mounted."""

    host: Host
    in_container: ClassVar[bool] = True
    images: dict[str, str] = field(default_factory=dict)  # kit image name -> image reference on the host
    secrets_file: str = ".secrets.env"
    secrets_for_shell: bool = False

    def check(self, connection: Connection, in_batch_job: bool) -> None:
        name = self.host.name
        code, _, err = connection.sh("docker version --format '{{.Server.Version}}'", check=False)
        if code != 0:
            raise HostError(f"host '{name}': runtime is docker but `docker version` failed: "
                            f"{err.strip().splitlines()[-1] if err.strip() else 'no output'}; run `invoke provision --host {name}`")
        for image, ref in sorted(self.images.items()):
            code, _, _ = connection.sh(f"docker image inspect --format '{{{{.Id}}}}' {shell.quote(ref)}", check=False)
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
            "--user", USER_IDS, "-v", f"{place.remote_dir}:{host_files.CONTAINER_STEP_DIR}",
            "-v", f"{place.code_dir}:{CONTAINER_CODE_DIR}:ro", "-w", host_files.CONTAINER_STEP_DIR,
            "-e", f"PYTHONPATH={CONTAINER_CODE_DIR}", "-e", "PYTHONUNBUFFERED=1",
            "-e", "HOME=/tmp",  # the host's uid may have no home in the image; the caches are mounted below
            *host_files.container_mounts(self.host, place.models_present),
            "--gpus", "all",
        ]
        workload = workload_argv("python3", module, f"{host_files.CONTAINER_STEP_DIR}/params.json", host_files.CONTAINER_STEP_DIR)
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


__all__ = ["DockerRuntime"]
