"""The runtime protocol: how a workload's command is built on a host, natively or in a container.

The one difference between the runtimes (``native.py``, ``docker.py``, ``apptainer.py``, ``pyxis.py``, chosen by
the host's ``runtime`` through ``__init__.RUNTIMES``): the command line, what must be checked on the host before a
run, how the secrets file is written, and what outlives a step's session and must be removed after it (a
container). Launching, following and stopping the step are the launcher's (``launchers/``), on any access.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import host_files
from reprokit.hosts.access.base import Connection

CONTAINER_CODE_DIR = "/opt/reprokit"


@dataclass(frozen=True)
class StepPlace:
    """What a step's command line needs to know of its run on the host."""

    run_id: str
    step_name: str
    remote_dir: str
    code_dir: str
    models_present: bool  # the host has its models_dir
    with_secrets: bool
    python_path: tuple[str, ...] = ()  # after the shipped code on a native workload's path (the caller's, on this machine)


class Runtime(Protocol):
    in_container: ClassVar[bool]  # the workload runs in an image, its step directory mounted at /out
    secrets_file: str  # the name the wrapper reads the secrets from, in the step's directory
    secrets_for_shell: bool  # a shell script to source (native) or docker's --env-file form

    def check(self, connection: Connection, in_batch_job: bool) -> None:
        """Refuse the host before anything is written when the runtime cannot run the kit there (``in_batch_job``:
        the host's launcher runs each step as a scheduler's job)."""

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        """The shell command that runs ``module`` for ``place``; every value quoted."""

    def cleanup(self, place: StepPlace) -> str:
        """A shell command that ends what outlives the step's session (empty: nothing does)."""


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
    mounts = [(place.remote_dir, host_files.CONTAINER_STEP_DIR, "rw"), (place.code_dir, CONTAINER_CODE_DIR, "ro"),
              (cache, cache, "rw")]
    return mounts + ([(host.models_dir, host.models_dir, "ro")] if place.models_present else [])


def container_env(host: Host) -> list[str]:
    return [f"PYTHONPATH={CONTAINER_CODE_DIR}", "PYTHONUNBUFFERED=1", "HOME=/tmp", *host_files.cache_env(host),
            *host_files.gpu_env(host)]


__all__ = ["CONTAINER_CODE_DIR", "Runtime", "StepPlace", "cluster_mounts", "container_env", "image_ref"]
