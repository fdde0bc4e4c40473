"""Native vs docker is a composition (the workload's command line), each axis a registry, and one executor with one
life cycle for every host, this machine included."""

from __future__ import annotations

import inspect
import shlex

import pytest

from reprokit.errors import ConfigError, HostError
from reprokit.hosts.access import ACCESS
from reprokit.hosts.access.local import LocalConnection, LocalPull
from reprokit.hosts.access.ssh import SSHConnection
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.executor import Executor
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.host_executor import HostExecutor
from reprokit.hosts.launch import Launcher
from reprokit.hosts.launchers import LAUNCHERS
from reprokit.hosts.launchers.session import SessionLauncher
from reprokit.hosts.launchers.slurm import SlurmLauncher
from reprokit.hosts.runtimes import RUNTIMES, StepPlace, runtime_for
from reprokit.hosts.runtimes.apptainer import ApptainerRuntime
from reprokit.hosts.runtimes.docker import SECRETS_ENTRY, DockerRuntime
from reprokit.hosts.runtimes.native import NativeRuntime
from reprokit.hosts.runtimes.pyxis import PyxisRuntime

INVENTORY = """all:
  vars:
    ansible_user: rk
    workdir: /srv/rk work
    ansible_python_interpreter: /opt/py/bin/python3
  hosts:
    native:
      ansible_host: 10.0.0.9
      runtime: native
    docker:
      ansible_host: 10.0.0.10
      runtime: docker
      container_shm_size: 8g
"""
PLACE = StepPlace(run_id="R1", step_name="probe", remote_dir="/srv/rk work/runs/R1/probe", code_dir="/srv/rk work/code/ab",
                  models_present=True, with_secrets=True)


@pytest.fixture
def inventory(tmp_path):
    (tmp_path / "inventory.yml").write_text(INVENTORY, encoding="utf-8")
    return load_inventory(tmp_path / "inventory.yml")


def test_native_command_runs_the_hosts_python_on_the_shipped_code(inventory):
    runtime = NativeRuntime(inventory.host("native"))
    assert runtime.command("reprokit.workloads.probe", None, PLACE) == (
        "env 'PYTHONPATH=/srv/rk work/code/ab' PYTHONUNBUFFERED=1 'REPROKIT_CACHE=/srv/rk work/cache/reprokit'"
        " /opt/py/bin/python3 -m reprokit.workloads.probe --params params.json --out-dir .")
    assert runtime.cleanup(PLACE) == ""
    assert (runtime.secrets_file, runtime.secrets_for_shell) == (".secrets.sh", True)


def test_docker_command_mounts_the_step_code_and_caches_and_reads_secrets_from_fd_3(inventory):
    """The secrets reach the container on its stdin (descriptor 3, the deleted .secrets.env) and become read-only
    files of a tmpfs: nothing of them is in the container's environment (docker inspect's Config.Env)."""
    runtime = DockerRuntime(inventory.host("docker"), {"sglang": "registry:5000/sglang@sha256:abc"})
    command = runtime.command("reprokit.workloads.probe", "sglang", PLACE)
    inner = shlex.split(command)
    assert inner[:2] == ["sh", "-c"] and len(inner) == 3
    assert inner[2] == (
        "docker run --rm --name R1-probe --label reprokit.run=R1 --ipc=host --shm-size=8g --ulimit memlock=-1"
        " --ulimit stack=67108864 --user $(id -u):$(id -g) -v '/srv/rk work/runs/R1/probe:/out'"
        " -v '/srv/rk work/code/ab:/opt/reprokit:ro' -w /out -e PYTHONPATH=/opt/reprokit -e PYTHONUNBUFFERED=1"
        " -e HOME=/tmp -v '/srv/rk work/cache:/srv/rk work/cache' -v /models:/models:ro"
        " -e 'REPROKIT_CACHE=/srv/rk work/cache/reprokit' -e 'HF_HOME=/srv/rk work/cache/huggingface'"
        " -e 'TRITON_CACHE_DIR=/srv/rk work/cache/triton' -e 'FLASHINFER_WORKSPACE_BASE=/srv/rk work/cache/flashinfer'"
        " --gpus all -i --tmpfs /run/reprokit-secrets:rw,noexec,nosuid,size=1m,mode=0700,uid=$(id -u),gid=$(id -g)"
        " -e HF_TOKEN_PATH=/run/reprokit-secrets/HF_TOKEN registry:5000/sglang@sha256:abc sh -c"
        f" {shlex.quote(SECRETS_ENTRY)} /run/reprokit-secrets python3 -m reprokit.workloads.probe"
        " --params /out/params.json --out-dir /out 0<&3")
    assert "--env-file" not in command
    assert runtime.cleanup(PLACE) == "docker rm -f R1-probe >/dev/null 2>&1"
    assert (runtime.secrets_file, runtime.secrets_for_shell) == (".secrets.env", False)


def test_docker_refuses_a_step_without_an_image_or_its_reference(inventory):
    runtime = DockerRuntime(inventory.host("docker"), {})
    with pytest.raises(HostError) as no_image:
        runtime.command("reprokit.workloads.probe", None, PLACE)
    assert str(no_image.value) == "host 'docker' runs workloads in Docker, but the step names no image"
    with pytest.raises(HostError) as no_ref:
        runtime.command("reprokit.workloads.probe", "sglang", PLACE)
    assert str(no_ref.value) == ("host 'docker': no image reference for 'sglang'; build it (`invoke build --host docker`)"
                                 " or pass --image sglang=REF")


def test_the_factory_composes_the_runtime_the_host_names(inventory, tmp_path):
    options = ConnectOptions(known_hosts=tmp_path / "known_hosts", ssh_config="none", images={"sglang": "ref"})
    native = executor_for(inventory.host("native"), inventory, tmp_path / "runs", options, say=lambda m: None)
    docker = executor_for(inventory.host("docker"), inventory, tmp_path / "runs", options, say=lambda m: None)
    assert type(native.runtime) is NativeRuntime and type(docker.runtime) is DockerRuntime
    assert docker.runtime.images == {"sglang": "ref"}
    assert type(native.transport) is SSHConnection
    assert native.pullback.transport is native.transport  # one connection per host, shared by the layers
    assert type(native.launcher) is SessionLauncher and native.launcher.transport is native.transport


def test_local_is_access_local_with_the_session_launcher_and_any_runtime(tmp_path):
    """This machine is a host like any other: the same executor and launcher, its work beside the records."""
    (tmp_path / "inv.yml").write_text("all:\n  hosts:\n    box:\n      ansible_connection: local\n"
                                      "      runtime: docker\n", encoding="utf-8")
    inventory = load_inventory(tmp_path / "inv.yml")
    options = ConnectOptions(known_hosts=tmp_path / "known_hosts", images={"sglang": "ref"})
    for name, runtime in (("local", NativeRuntime), ("box", DockerRuntime)):
        executor = executor_for(inventory.host(name), inventory, tmp_path / "runs", options, say=lambda m: None)
        assert type(executor) is HostExecutor and type(executor.runtime) is runtime
        assert type(executor.transport) is LocalConnection and type(executor.pullback) is LocalPull
        assert type(executor.launcher) is SessionLauncher and executor.launcher.transport is executor.transport
        assert executor.host.workdir == str((tmp_path / "runs" / ".hosts" / name).resolve())
        assert executor.host_lock("R1").lock_dir == f"{executor.host.workdir}/lock"


def test_each_registry_is_its_packages_one_list_and_the_inventory_refuses_other_names(tmp_path):
    assert (list(ACCESS), list(LAUNCHERS), list(RUNTIMES)) == (["local", "ssh"], ["session", "slurm"],
                                                               ["native", "docker", "apptainer", "pyxis"])
    assert [LAUNCHERS[name].kind for name in LAUNCHERS] == list(LAUNCHERS)  # a handle names its launcher's key
    for field, value, known in (("launcher", "kubernetes", "session, slurm"),
                                ("runtime", "podman", "native, docker, apptainer, pyxis")):
        (tmp_path / "inv.yml").write_text(f"all:\n  hosts:\n    gpu:\n      {field}: {value}\n", encoding="utf-8")
        with pytest.raises(ConfigError) as err:
            load_inventory(tmp_path / "inv.yml")
        assert str(err.value) == (f"{tmp_path / 'inv.yml'}:4: host 'gpu': field '{field}': unknown {field}"
                                  f" '{value}'; use one of {known}")


@pytest.mark.parametrize("launcher", [SessionLauncher, SlurmLauncher])
def test_every_launcher_has_the_protocols_methods_with_its_signatures(launcher):
    assert LAUNCHERS == {"session": SessionLauncher, "slurm": SlurmLauncher}
    assert _members(Launcher) == ["collect", "end_run", "follow", "launch", "lock_dir", "poll", "reap", "stop",
                                  "usable_nodes"]
    for name in _members(Launcher):
        assert list(inspect.signature(getattr(launcher, name)).parameters) == \
            list(inspect.signature(getattr(Launcher, name)).parameters), name


def _members(protocol) -> list[str]:
    return sorted(name for name, value in vars(protocol).items() if not name.startswith("_")
                  and (callable(value) or isinstance(value, property)))


@pytest.mark.parametrize("executor", [HostExecutor])
def test_every_executor_has_the_protocols_life_cycle_with_its_signatures(executor):
    assert _members(Executor) == ["attach", "close_connection", "connect", "end_left_run", "finish", "host",
                                  "host_lock", "host_path_exists", "pending", "prepare", "prune", "run_step", "stage_inputs"]
    for name in _members(Executor):
        wanted = getattr(Executor, name)
        if isinstance(wanted, property):
            continue  # an attribute or a property: both read as `executor.host`
        assert list(inspect.signature(getattr(executor, name)).parameters) == \
            list(inspect.signature(wanted).parameters), name


CLUSTER = """all:
  hosts:
    cluster:
      ansible_host: 10.0.0.20
      workdir: /scratch/rk
      launcher: slurm
      runtime: RUNTIME
"""


def _cluster_host(tmp_path, runtime):
    (tmp_path / "inv.yml").write_text(CLUSTER.replace("RUNTIME", runtime), encoding="utf-8")
    return load_inventory(tmp_path / "inv.yml").host("cluster")


def test_the_cluster_container_tools_mount_the_step_code_and_caches_as_docker_does(tmp_path):
    place = StepPlace("R1", "probe", "/scratch/rk/runs/R1/probe", "/scratch/rk/code/ab", models_present=True,
                      with_secrets=False)
    refs = {"sglang": "docker://registry:5000/sglang@sha256:abc"}
    apptainer = runtime_for(_cluster_host(tmp_path, "apptainer"), refs)
    assert type(apptainer) is ApptainerRuntime and apptainer.command("reprokit.workloads.probe", "sglang", place) == (
        "apptainer exec --nv --bind /scratch/rk/runs/R1/probe:/out:rw,/scratch/rk/code/ab:/opt/reprokit:ro,"
        "/scratch/rk/cache:/scratch/rk/cache:rw,/models:/models:ro --pwd /out --env PYTHONPATH=/opt/reprokit"
        " --env PYTHONUNBUFFERED=1 --env HOME=/tmp --env REPROKIT_CACHE=/scratch/rk/cache/reprokit"
        " --env HF_HOME=/scratch/rk/cache/huggingface --env TRITON_CACHE_DIR=/scratch/rk/cache/triton"
        " --env FLASHINFER_WORKSPACE_BASE=/scratch/rk/cache/flashinfer docker://registry:5000/sglang@sha256:abc"
        " python3 -m reprokit.workloads.probe --params /out/params.json --out-dir /out")
    pyxis = runtime_for(_cluster_host(tmp_path, "pyxis"), refs)
    assert type(pyxis) is PyxisRuntime and pyxis.command("reprokit.workloads.probe", "sglang", place) == (
        "env PYTHONPATH=/opt/reprokit PYTHONUNBUFFERED=1 HOME=/tmp REPROKIT_CACHE=/scratch/rk/cache/reprokit"
        " HF_HOME=/scratch/rk/cache/huggingface TRITON_CACHE_DIR=/scratch/rk/cache/triton"
        " FLASHINFER_WORKSPACE_BASE=/scratch/rk/cache/flashinfer srun --ntasks=1"
        " --container-image=docker://registry:5000/sglang@sha256:abc --container-mounts=/scratch/rk/runs/R1/probe:/out:rw,"
        "/scratch/rk/code/ab:/opt/reprokit:ro,/scratch/rk/cache:/scratch/rk/cache:rw,/models:/models:ro"
        " --container-workdir=/out python3 -m reprokit.workloads.probe --params /out/params.json --out-dir /out")
    with pytest.raises(HostError) as no_ref:
        pyxis.command("reprokit.workloads.probe", "other", place)
    assert str(no_ref.value) == ("host 'cluster': no image reference for 'other'; pass --image other=REF of one the"
                                 " cluster can pull (Pyxis)")
