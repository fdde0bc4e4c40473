"""``srun --container-image`` inside the step's batch job (Pyxis/enroot): a scheduler's runtime."""

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
class PyxisRuntime:
    """``srun --container-image`` inside the step's batch job (Pyxis/enroot): the job's GPUs, the step mounted."""

    host: Host
    in_container: ClassVar[bool] = True
    images: dict[str, str] = field(default_factory=dict)
    secrets_file: str = ".secrets.sh"  # sourced by the job script; srun passes the environment into the container
    secrets_for_shell: bool = True

    def check(self, connection: Connection, in_batch_job: bool) -> None:
        if not in_batch_job:
            raise HostError(f"host '{self.host.name}': runtime pyxis runs `srun --container-image` in a Slurm job; set"
                            " `launcher: slurm` for it in inventory.yml")
        code, _, _ = connection.sh("srun --help 2>&1 | grep -q -- --container-image", check=False)
        if code != 0:
            raise HostError(f"host '{self.host.name}': runtime is pyxis but this Slurm's srun has no --container-image"
                            " (the Pyxis plugin is not installed); ask the cluster's admins, or set `runtime: native`")

    def command(self, module: str, image: str | None, place: StepPlace) -> str:
        ref = image_ref(self.host, self.images, image, "Pyxis")
        mounts = ",".join(f"{src}:{dst}:{mode}" for src, dst, mode in cluster_mounts(self.host, place))
        argv = ["env", *container_env(self.host), "srun", "--ntasks=1", f"--container-image={ref}",
                f"--container-mounts={mounts}", f"--container-workdir={host_files.CONTAINER_STEP_DIR}",
                *workload_argv("python3", module, f"{host_files.CONTAINER_STEP_DIR}/params.json", host_files.CONTAINER_STEP_DIR)]
        return shell.join(argv)

    def cleanup(self, place: StepPlace) -> str:
        return ""  # the container ends with its job step


__all__ = ["PyxisRuntime"]
