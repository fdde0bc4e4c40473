"""The kits as Slurm jobs through the real login node: the same outcomes as on an SSH host, job ids in the record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import run_invoke
from tests.integration.remote.conftest import ADDRESSES, host_workdir
from tests.integration.remote.conftest import STATE as SSH_STATE
from tests.integration.slurm.conftest import inventory, known_hosts, scontrol_job, squeue, workdir


def repro(tmp_path: Path, inv: Path, known: Path, *args: str, kit: str = "smem-probe"):
    return run_invoke("repro", kit, "--inventory", str(inv), "--known-hosts", str(known), "--runs-dir",
                      str(tmp_path / "runs"), "--json", *args, timeout=400)


def with_ssh_host(inv: Path, known: Path, work: Path) -> None:
    """Add the SSH test host h5 (same Python, same GPU: the libcuda double) to compare with."""
    inv.write_text(inv.read_text() + f"    h5:\n      ansible_host: {ADDRESSES['h5']}\n      workdir: {work}\n")
    key_type, key, _ = (SSH_STATE / "h5" / "ssh_host_ed25519_key.pub").read_text().split(" ", 2)
    known.write_text(known.read_text() + f"{ADDRESSES['h5']} {key_type} {key}\n")


def step_outcomes(run_dir: str) -> dict[str, tuple[str, int | None]]:
    return {s.name: (s.status, s.exit_code) for s in load_manifest(run_dir).steps}


# smem-probe: the double's GPU passes the launches and the arch's limit, torch-and-driver-agree cannot say (no torch);
# tile-sweep and ep8-crash: the steps that need torch, flashinfer or sglang cannot say, so their expectations cannot.
KIT_EXIT = {"smem-probe": ExitCode.INCONCLUSIVE, "tile-sweep": ExitCode.INCONCLUSIVE, "ep8-crash": ExitCode.INCONCLUSIVE}


@pytest.mark.parametrize("kit", list(KIT_EXIT))
def test_each_kit_runs_as_jobs_and_ends_as_on_an_ssh_host(tmp_path, kit):
    inv = inventory(tmp_path / "inv.yml", workdir(f"kit-{kit}"))
    known = known_hosts(tmp_path / "known_hosts")
    with_ssh_host(inv, known, host_workdir("h5", f"slurm-compare-{kit}"))
    on_slurm = repro(tmp_path, inv, known, "--host", "cluster", kit=kit)
    on_ssh = repro(tmp_path, inv, known, "--host", "h5", kit=kit)
    assert (on_slurm.returncode, on_ssh.returncode) == (KIT_EXIT[kit], KIT_EXIT[kit]), on_slurm.stderr
    slurm_out, ssh_out = json.loads(on_slurm.stdout), json.loads(on_ssh.stdout)
    assert (slurm_out["verdict"], slurm_out["summary"]) == (ssh_out["verdict"], ssh_out["summary"])
    assert [(j["name"], j["status"]) for j in slurm_out["expectations"]] == \
        [(j["name"], j["status"]) for j in ssh_out["expectations"]]
    assert step_outcomes(slurm_out["run_dir"]) == step_outcomes(ssh_out["run_dir"])
    assert verify_record(slurm_out["run_dir"]) == []
    manifest = load_manifest(slurm_out["run_dir"])
    assert manifest.status == "complete" and manifest.host["launcher"] == "slurm"
    ran = [s for s in manifest.steps if s.log is not None and s.status != "not_run"]
    assert ran, "the kit ran no workload step"
    for step in ran:  # each workload step was one job, as Slurm itself knows it
        job = scontrol_job(step.launch["job_id"])
        assert job["JobName"] == f"{manifest.run_id}-{step.name}"
        assert (job["UserId"].split("(")[0], job["NodeList"]) == ("rkuser", step.launch["nodes"])
        assert step.launch["state"] == job["JobState"] == ("COMPLETED" if step.exit_code == 0 else "FAILED")
        assert step.launch["exit_code"] == step.exit_code and step.launch["seen_by"] == "scontrol"
    report = (Path(slurm_out["run_dir"]) / "report.md").read_text(encoding="utf-8")
    for step in ran:  # the job of each step in the report, as in the manifest
        assert f"| {step.name} | {step.launch['job_id']} | {step.launch['nodes']} | debug |" in report
    assert '<table id="jobs">' in (Path(slurm_out["run_dir"]) / "report.html").read_text(encoding="utf-8")
    assert all(s.launch is None for s in load_manifest(ssh_out["run_dir"]).steps)
    assert "Batch jobs" not in (Path(ssh_out["run_dir"]) / "report.md").read_text(encoding="utf-8")
    assert squeue(manifest.run_id) == []


def test_fan_out_over_two_nodes_gives_two_records_and_the_table(tmp_path):
    inv = inventory(tmp_path / "inv.yml", workdir("fan-out"))
    known = known_hosts(tmp_path / "known_hosts")
    proc = repro(tmp_path, inv, known, "--host", "cluster", "--nodes", "2")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    rows = json.loads(proc.stdout)
    assert [(r["host"], r["verdict"], r["exit_code"]) for r in rows] == [("cluster-c1", "INCONCLUSIVE", 3), ("cluster-c2", "INCONCLUSIVE", 3)]
    for row, node in zip(rows, ("c1", "c2")):
        manifest = load_manifest(row["run_dir"])
        assert manifest.host["slurm"]["node"] == node and verify_record(row["run_dir"]) == []
        probe = next(s for s in manifest.steps if s.name == "probe")
        assert probe.launch["nodes"] == node == scontrol_job(probe.launch["job_id"])["NodeList"]
    too_many = repro(tmp_path, inv, known, "--host", "cluster", "--nodes", "3")
    assert too_many.returncode == ExitCode.BAD_INPUT
    assert too_many.stderr.strip() == ("error: --nodes 3: host 'cluster' has 2 usable node(s) now (c1, c2); ask for at"
                                       " most 2")


def test_a_bad_slurm_variable_is_one_line_and_sbatch_refusals_name_the_host(tmp_path):
    known = known_hosts(tmp_path / "known_hosts")
    bad = inventory(tmp_path / "bad.yml", workdir("bad-vars"), slurm_extra_args=["--output=/tmp/x"])
    proc = repro(tmp_path, bad, known, "--host", "cluster")
    assert proc.returncode == ExitCode.BAD_INPUT
    assert proc.stderr.strip() == (f"error: {bad}:14: host 'cluster': field 'slurm_extra_args': --output is set by"
                                   " reprokit for each job; remove it from slurm_extra_args")
    unknown = inventory(tmp_path / "unknown.yml", workdir("no-partition"), slurm_partition="nosuch")
    proc = repro(tmp_path, unknown, known, "--host", "cluster")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.strip().endswith(
        "sbatch refused step 'fingerprint': sbatch: error: Batch job submission failed: Invalid partition name"
        f" specified; check the slurm_* variables of cluster in the inventory ({unknown}:8)")


@pytest.mark.parametrize(("runtime", "said"), [
    ("pyxis", "error: host 'cluster': runtime is pyxis but this Slurm's srun has no --container-image (the Pyxis plugin"
              " is not installed); ask the cluster's admins, or set `runtime: native`"),
    ("apptainer", "error: host 'cluster': runtime is apptainer but `apptainer` is not on its PATH there; ask the"
                  " cluster's admins (Apptainer is not packaged in Debian 12), or set `runtime: native`"),
])
def test_a_container_tool_the_cluster_lacks_is_refused_before_anything_runs(tmp_path, runtime, said):
    work = workdir(f"no-{runtime}")
    inv = inventory(tmp_path / "inv.yml", work, runtime=runtime)
    # an image reference given, so the run gets past the check made before any host is reached, to the cluster's
    proc = repro(tmp_path, inv, known_hosts(tmp_path / "known_hosts"), "--host", "cluster", "--image",
                 "workload=127.0.0.1:5000/reprokit-test/workload:absent")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.strip() == said
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []
    assert squeue(str(work)) == []
