"""``apptainer exec --nv`` of the step's image (a .sif path or docker:// reference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import host_files, shell
from reprokit.hosts.access.base import Connection
from reprokit.hosts.executor import workload_argv
from reprokit.hosts.runtimes.base import StepPlace, cluster_mounts, container_env, image_ref


@dataclass
class ApptainerRuntime:
    """``apptainer exec`` of the step's image (a .sif path or docker:// reference), the GPUs with --nv."""

    host: Host
    in_container: ClassVar[bool] = True
    images: dict[str, str] = field(default_factory=dict)
    secrets_file: str = ".secrets.sh"  # sourced by the wrapper; apptainer passes the environment in
    secrets_for_shell: bool = True

    def check(self, connection: Connection, in_batch_job: bool) -> None:
        code, _, _ = connection.sh("command -v apptainer >/dev/null", check=False)
        if code != 0:
            raise HostError(f"host '{self.host.name}': runtime is apptainer but `apptainer` is not on its PATH there; ask"
                            " the cluster's admins (Apptainer is not packaged in Debian 12), or set `runtime: native`")

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        ref = image_ref(self.host, self.images, image, "Apptainer")
        binds = ",".join(f"{src}:{dst}:{mode}" for src, dst, mode in cluster_mounts(self.host, place))
        argv = ["apptainer", "exec", "--nv", "--bind", binds,
                "--pwd", host_files.CONTAINER_STEP_DIR, *[a for e in container_env(self.host) for a in ("--env", e)], ref,
                *workload_argv("python3", module, f"{host_files.CONTAINER_STEP_DIR}/params.json", host_files.CONTAINER_STEP_DIR)]
        return shell.join(argv)

    def cleanup(self, place: StepPlace) -> str:
        return ""  # apptainer exec leaves no container behind


__all__ = ["ApptainerRuntime"]
