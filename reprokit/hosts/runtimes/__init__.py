"""Runtimes, by the inventory's ``runtime``: the one list of their names.

A runtime builds a workload's command line (``base.Runtime``); it runs the same through every launcher and over
every access, so the local machine runs Docker steps as a GPU host does.
"""

from __future__ import annotations

from reprokit.config.inventory import Host
from reprokit.hosts.runtimes.apptainer import ApptainerRuntime
from reprokit.hosts.runtimes.base import Runtime, StepPlace
from reprokit.hosts.runtimes.docker import DockerRuntime
from reprokit.hosts.runtimes.native import NativeRuntime
from reprokit.hosts.runtimes.pyxis import PyxisRuntime

RUNTIMES: dict[str, type[NativeRuntime | DockerRuntime | ApptainerRuntime | PyxisRuntime]] = {
    "native": NativeRuntime,
    "docker": DockerRuntime,
    "apptainer": ApptainerRuntime,
    "pyxis": PyxisRuntime,
}


def runtime_for(host: Host, images: dict[str, str]) -> Runtime:
    """The host's runtime, by the name the inventory gives it (checked against ``RUNTIMES`` when it was loaded)."""
    return RUNTIMES[host.runtime](host, dict(images))


__all__ = ["RUNTIMES", "Runtime", "StepPlace", "runtime_for"]
