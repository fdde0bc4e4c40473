"""The host's own Python, the shipped code first on its path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from reprokit.config.inventory import Host
from reprokit.hosts import host_files, shell
from reprokit.hosts.access.base import Connection
from reprokit.hosts.executor import workload_argv
from reprokit.hosts.runtimes.base import StepPlace


@dataclass
class NativeRuntime:
    """The host's own Python, the shipped code on its path."""

    host: Host
    images: dict[str, str] = field(default_factory=dict)  # none: the host's own Python
    in_container: ClassVar[bool] = False
    secrets_file: str = ".secrets.sh"
    secrets_for_shell: bool = True

    def check(self, connection: Connection, in_batch_job: bool) -> None:
        """The interpreter is found when the first step runs; nothing to check ahead."""

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        python_path = ":".join([place.code_dir, *place.python_path])
        return shell.join(["env", f"PYTHONPATH={python_path}", "PYTHONUNBUFFERED=1",
                           *host_files.cache_env(self.host, ("REPROKIT_CACHE",)), *host_files.gpu_env(self.host),
                           *workload_argv(self.host.python, module, "params.json", ".")])

    def cleanup(self, place: StepPlace) -> str:
        return ""


__all__ = ["NativeRuntime"]
