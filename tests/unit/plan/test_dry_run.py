"""--dry is the run's own preparation and planner with the launch left out (reprokit/run/dry_run.py)."""

from __future__ import annotations

import pytest

from reprokit.config.kit import load_kit_file
from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions
from reprokit.run.dry_run import describe_plan
from tests.conftest import REPO

KITS = REPO / "kits"
INVENTORY = """all:
  hosts:
    gpu:
      ansible_host: 10.0.0.9
      ansible_user: rk
      runtime: native
      workdir: /srv/rk
      gpu_arch: sm120
      gpu_count: 2
    cluster:
      ansible_host: 10.0.0.20
      workdir: /scratch/rk
      launcher: slurm
      runtime: pyxis
"""


@pytest.fixture
def inventory(tmp_path):
    (tmp_path / "inventory.yml").write_text(INVENTORY, encoding="utf-8")
    return load_inventory(tmp_path / "inventory.yml")


def plan_of(kit: str, host: str, inventory, tmp_path, **options):
    kit_path = KITS / f"{kit}.yml"
    selection = {"only": [], "skip": [], "set": {}}
    plan = describe_plan(load_kit_file(kit_path), kit_path, [inventory.host(host)], tmp_path / "runs",
                         ConnectOptions(known_hosts=tmp_path / "known_hosts", ssh_config="none", **options), selection,
                         inventory, KITS)
    (host_plan,) = plan["hosts"]
    return host_plan


def test_the_plan_is_the_planners_with_the_inventorys_gpu_and_the_runtimes_command(inventory, tmp_path):
    plan = plan_of("tile-sweep", "gpu", inventory, tmp_path)
    assert (plan["connection"], plan["launcher"], plan["runtime"], plan["lock"]) == ("ssh", "session", "native",
                                                                                     "/srv/rk/lock")
    steps = {s["name"]: s for s in plan["steps"]}
    # arch: host is the planner's to fill: from the inventory's gpu_arch here, from the fingerprint in the run
    assert steps["static-smem"]["params"]["arch"] == "sm120" and steps["static-smem"]["not_run"] is None
    assert steps["static-smem"]["command"].startswith("env PYTHONPATH=/srv/rk/code/")
    assert steps["static-smem"]["command"].endswith(" python3 -m reprokit.workloads.static_smem --params params.json"
                                                    " --out-dir .")
    assert steps["probe"]["runs_on"] == "gpu (rk@10.0.0.9:22) natively"


def test_a_cluster_host_shows_its_launcher_and_its_runtimes_command(inventory, tmp_path):
    plan = plan_of("smem-probe", "cluster", inventory, tmp_path, images={"workload": "docker://registry/w@sha256:ab"})
    assert (plan["launcher"], plan["runtime"], plan["lock"]) == ("slurm", "pyxis", "/scratch/rk/locks/cluster")
    probe = next(s for s in plan["steps"] if s["name"] == "probe")
    assert probe["runs_on"].endswith(" in a container")
    assert " srun --ntasks=1 --container-image=docker://registry/w@sha256:ab " in probe["command"]


def test_an_image_the_kit_does_not_declare_stops_the_dry_run_as_it_stops_the_run(inventory, tmp_path):
    with pytest.raises(ConfigError) as err:
        plan_of("smem-probe", "gpu", inventory, tmp_path, images={"nope": "ref"})
    assert str(err.value).startswith("--image nope=ref: kit smem-probe declares no image 'nope'")
