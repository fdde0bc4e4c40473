"""`invoke provision` on a Slurm host checks its login node and says what it will not touch."""

from __future__ import annotations

import shutil

from reprokit.errors import ExitCode
from tests.conftest import run_invoke
from tests.integration.slurm.conftest import inventory, known_hosts, workdir

NOT_TOUCHED = ("cluster: will not touch: the compute nodes, their drivers, container tools and the Slurm configuration"
               " belong to the cluster's admins; provision installs nothing on a Slurm host")


def test_provision_checks_the_login_node_and_installs_nothing(tmp_path):
    work = workdir("provision")
    known = known_hosts(tmp_path / "known_hosts")
    proc = run_invoke("provision", "--host", "cluster", "--inventory", str(inventory(tmp_path / "inv.yml", work)),
                      "--known-hosts", str(known), timeout=120)
    assert proc.returncode == ExitCode.PASS, proc.stderr
    assert proc.stdout.splitlines() == [
        "cluster: ok: Slurm tools on the login node (sbatch, squeue, scancel, scontrol, sinfo)",
        "cluster: ok: partition debug* is up, 2 node(s), GPUs: gpu:4",
        f"cluster: ok: workdir {work} on the shared file system", NOT_TOUCHED]
    assert sorted(p.name for p in work.iterdir()) == []  # nothing written there


def test_provision_of_a_partition_that_is_down_is_a_host_error(tmp_path):
    inv = inventory(tmp_path / "inv.yml", workdir("provision-parked"), slurm_partition="parked")
    proc = run_invoke("provision", "--host", "cluster", "--inventory", str(inv), "--known-hosts",
                      str(known_hosts(tmp_path / "known_hosts")), timeout=120)
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stdout.splitlines()[1] == "cluster: failed: partition parked is down, 2 node(s), GPUs: gpu:4"


def test_unlock_of_a_slurm_host_goes_through_its_launchers_lock(tmp_path):
    work = workdir("unlock")
    inv = inventory(tmp_path / "inv.yml", work)
    known = known_hosts(tmp_path / "known_hosts")
    lock = work / "locks" / "cluster"
    lock.mkdir(parents=True)
    (lock / "owner.json").write_text('{"run_id": "R-gone", "control_host": "elsewhere", "pid": 1, "since": "x"}\n')
    for path in (lock.parent, lock, lock / "owner.json"):  # as a run of the login node's user left it
        shutil.chown(path, "rkuser", "rkuser")
    refused = run_invoke("unlock", "--host", "cluster", "--inventory", str(inv), "--known-hosts", str(known))
    assert refused.returncode == ExitCode.HOST_ERROR and "locked by run R-gone of another control machine" in refused.stderr
    forced = run_invoke("unlock", "--host", "cluster", "--force", "--inventory", str(inv), "--known-hosts", str(known))
    assert forced.returncode == ExitCode.PASS, forced.stderr
    assert forced.stderr.strip() == "removed the lock of run R-gone on host 'cluster'" and not lock.exists()
