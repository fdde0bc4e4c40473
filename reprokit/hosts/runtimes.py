"""How a workload's command is built on an SSH host: natively, in a Docker container, or in the cluster's container
tool (Apptainer's ``apptainer exec --nv``, Pyxis's ``srun --container-image``), chosen by the host's ``runtime``.

The one difference between the runtimes is here: the command line, what must be checked on the host
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
                           *staging.cache_env(self.host, ("REPROKIT_CACHE",)), *staging.gpu_env(self.host),
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
            "--gpus", "all",
        ]
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


def image_ref(host: Host, images: dict[str, str], image: str | None, tool: str) -> str:
    if not image:
        raise HostError(f"host '{host.name}' runs workloads in {tool}, but the step names no image")
    ref = images.get(image)
    if not ref:
        raise HostError(f"host '{host.name}': no image reference for '{image}'; pass --image {image}=REF of one the"
                        f" cluster can pull ({tool})")
    return ref


def cluster_mounts(host: Host, place: StepPlace) -> list[tuple[str, str, str]]:
    """(host path, container path, mode) of a step in the cluster's container tool: as ``docker run`` mounts them."""
    cache = host.host_cache_dir
    mounts = [(place.remote_dir, staging.CONTAINER_STEP_DIR, "rw"), (place.code_dir, CONTAINER_CODE_DIR, "ro"),
              (cache, cache, "rw")]
    return mounts + ([(host.models_dir, host.models_dir, "ro")] if place.models_present else [])


def container_env(host: Host) -> list[str]:
    return [f"PYTHONPATH={CONTAINER_CODE_DIR}", "PYTHONUNBUFFERED=1", "HOME=/tmp", *staging.cache_env(host),
            *staging.gpu_env(host)]


@dataclass
class ApptainerRuntime:
    """``apptainer exec`` of the step's image (a .sif path or docker:// reference), the GPUs with --nv."""

    host: Host
    images: dict[str, str] = field(default_factory=dict)
    secrets_file: str = ".secrets.sh"  # sourced by the wrapper; apptainer passes the environment in
    secrets_for_shell: bool = True

    def check(self, transport: Transport) -> None:
        code, _, _ = transport.sh("command -v apptainer >/dev/null", check=False)
        if code != 0:
            raise HostError(f"host '{self.host.name}': runtime is apptainer but `apptainer` is not on its PATH there; ask"
                            " the cluster's admins (Apptainer is not packaged in Debian 12), or set `runtime: native`")

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        ref = image_ref(self.host, self.images, image, "Apptainer")
        binds = ",".join(f"{src}:{dst}:{mode}" for src, dst, mode in cluster_mounts(self.host, place))
        argv = ["apptainer", "exec", "--nv", "--bind", binds,
                "--pwd", staging.CONTAINER_STEP_DIR, *[a for e in container_env(self.host) for a in ("--env", e)], ref,
                *workload_argv("python3", module, f"{staging.CONTAINER_STEP_DIR}/params.json", staging.CONTAINER_STEP_DIR)]
        return shell.join(argv)

    def cleanup(self, place: StepPlace) -> str:
        return ""  # apptainer exec leaves no container behind


@dataclass
class PyxisRuntime:
    """``srun --container-image`` inside the step's batch job (Pyxis/enroot): the job's GPUs, the step mounted."""

    host: Host
    images: dict[str, str] = field(default_factory=dict)
    secrets_file: str = ".secrets.sh"  # sourced by the job script; srun passes the environment into the container
    secrets_for_shell: bool = True

    def check(self, transport: Transport) -> None:
        if self.host.launcher != "slurm":
            raise HostError(f"host '{self.host.name}': runtime pyxis runs `srun --container-image` in a Slurm job; set"
                            " `launcher: slurm` for it in inventory.yml")
        code, _, _ = transport.sh("srun --help 2>&1 | grep -q -- --container-image", check=False)
        if code != 0:
            raise HostError(f"host '{self.host.name}': runtime is pyxis but this Slurm's srun has no --container-image"
                            " (the Pyxis plugin is not installed); ask the cluster's admins, or set `runtime: native`")

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        ref = image_ref(self.host, self.images, image, "Pyxis")
        mounts = ",".join(f"{src}:{dst}:{mode}" for src, dst, mode in cluster_mounts(self.host, place))
        argv = ["env", *container_env(self.host), "srun", "--ntasks=1", f"--container-image={ref}",
                f"--container-mounts={mounts}", f"--container-workdir={staging.CONTAINER_STEP_DIR}",
                *workload_argv("python3", module, f"{staging.CONTAINER_STEP_DIR}/params.json", staging.CONTAINER_STEP_DIR)]
        return shell.join(argv)

    def cleanup(self, place: StepPlace) -> str:
        return ""  # the container ends with its job step


RUNTIMES = {"native": lambda host, images: NativeRuntime(host), "docker": DockerRuntime, "apptainer": ApptainerRuntime,
            "pyxis": PyxisRuntime}


def runtime_for(host: Host, images: dict[str, str]) -> Runtime:
    """The host's runtime, by the name the inventory gives it."""
    return RUNTIMES[host.runtime](host, dict(images))


__all__ = ["ApptainerRuntime", "DockerRuntime", "NativeRuntime", "PyxisRuntime", "RUNTIMES", "Runtime", "StepPlace",
           "runtime_for"]
