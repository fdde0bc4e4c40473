"""`invoke repro` on the local host, end to end, with the real CLI, executor and workloads."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprokit.commands.run import run_exit_code
from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run.kit_run import run_kit
from reprokit.workloads import smem_probe
from tests.conftest import REPO, run_invoke
from tests.integration.remote.conftest import alive


def no_gpu() -> bool:
    try:
        smem_probe.init_driver()
        return False
    except Exception:
        return True


pytestmark = pytest.mark.skipif(not no_gpu(), reason="these tests pin the no-GPU outcome; the GPU outcome is in tests/gpu")


def only_run(runs: Path) -> Path:
    dirs = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(dirs) == 1, dirs
    return dirs[0]


def test_ep8_crash_on_local_is_inconclusive_with_reasons(tmp_path):
    proc = run_invoke("repro", "ep8-crash", "--runs-dir", str(tmp_path), "--json", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE == 3, proc.stderr
    out = json.loads(proc.stdout)
    run_dir = only_run(tmp_path)
    assert out["run_dir"] == str(run_dir)
    assert out["verdict"] == "INCONCLUSIVE"
    reasons = {j["name"]: j["reason"] for j in out["expectations"]}
    status = {j["name"]: j["status"] for j in out["expectations"]}
    assert reasons["sm120-optin-limit"].startswith("applies to sm120/sm121; this host has no GPU (no NVIDIA driver")
    for name in ("server-came-up", "smoke-request-answered", "autotuning-ran", "server-ready-despite-autotune-failures",
                 "failures-are-the-big-tiles", "triage-agrees-with-static-analysis"):
        assert status[name] == "INCONCLUSIVE", name
    # the static prediction needs no GPU: with nvcc here it answers which tiles fail on SM120
    if shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists():
        assert status["big-tiles-overflow-sm120"] == status["small-tiles-fit-sm120"] == "PASS"
    else:
        assert "nvcc" in reasons["big-tiles-overflow-sm120"]
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete"
    assert manifest["kit"]["name"] == "ep8-crash"
    assert manifest["pins"]["sglang"] == "0.5.9"
    assert manifest["host"]["name"] == "local"
    assert manifest["fingerprint"]["gpu_status"] == "no_driver"
    steps = {s["name"]: s for s in manifest["steps"]}
    assert steps["probe"]["status"] == "no_driver" and steps["probe"]["exit_code"] == 3
    assert steps["serve"]["status"] == "not_run"
    assert verify_record(run_dir) == []
    assert set(manifest["artifacts"]) >= {"verdict.json", "report.md", "fingerprint/result.json", "steps/probe/result.json",
                                          "steps/probe/step.log"}
    report = (run_dir / "report.md").read_text()
    assert report.startswith("# ep8-crash on local: can't tell here (INCONCLUSIVE)\n\n**can't tell here: 2 of 10 expectations"
                             " held, 8 could not be judged here** (INCONCLUSIVE: ")
    if status["big-tiles-overflow-sm120"] == "PASS":  # the root cause the run found without a GPU, before the rest
        assert "\n- static analysis: 2 kernel(s) over the sm120 limit of 101 376 B, by up to 1 024 B: gemm2 #14" in report


def test_probe_task_and_check_record(tmp_path):
    proc = run_invoke("probe", "--runs-dir", str(tmp_path))
    assert proc.returncode == 3
    assert "can't tell here: 0 of 4 expectations held, 4 could not be judged here (INCONCLUSIVE, exit 3)" in proc.stdout
    assert "[2/2] probe (smem-probe) ..." in proc.stderr
    run_dir = only_run(tmp_path)
    check = run_invoke("check-record", str(run_dir))
    assert check.returncode == 0
    assert f"all {len(load_manifest(run_dir).to_json()['artifacts'])} artifacts match their sha256" in check.stdout
    (run_dir / "report.md").write_text("tampered")
    check = run_invoke("check-record", str(run_dir))
    assert check.returncode == 1
    assert "report.md: sha256 differs from the manifest" in check.stdout


SHIPPED_KITS = sorted(path.stem for path in (REPO / "kits").glob("*.yml"))  # every kit of the tree, as the error lists them


@pytest.mark.parametrize(
    "args,message",
    [
        (["repro", "ep8-crsh"], "error: kits: unknown kit 'ep8-crsh' (did you mean 'ep8-crash'?); known kits: " + ", ".join(SHIPPED_KITS)),
        (["repro", "ep8-crash", "--host", "nope"],
         "error: inventory.yml: unknown host 'nope'; known hosts: local, rtx-pro-6000-01"),
    ],
)
def test_bad_names_give_one_line_and_write_nothing(tmp_path, args, message):
    proc = run_invoke(*args, "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == ExitCode.BAD_INPUT == 2
    assert proc.stderr.strip() == message
    assert not (tmp_path / "runs").exists()


def test_bad_inventory_gives_one_line(tmp_path):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  hosts:\n    gpu1:\n      ansible_host: 10.0.0.1\n      gpu_count: many\n")
    proc = run_invoke("repro", "smem-probe", "--inventory", str(inventory), "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: {inventory}:5: host 'gpu1': field 'gpu_count': Input should be a valid integer,"
                                   " unable to parse string as an integer (got 'many')")
    assert not (tmp_path / "runs").exists()


# A test double for the host's Python: real Python for the fingerprint, a hang for the probe.
HANGING_PYTHON = """#!/bin/sh
case "$*" in
  *smem_probe*) echo "probe started"; echo $$ > "{pidfile}"; exec sleep 300 ;;
esac
exec "{python}" "$@"
"""


def hanging_host(tmp_path: Path) -> tuple[Path, Path]:
    pidfile = tmp_path / "workload.pid"
    fake = tmp_path / "python-hangs"
    fake.write_text(HANGING_PYTHON.format(pidfile=pidfile, python=sys.executable))
    fake.chmod(0o755)
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        "all:\n  hosts:\n    hang:\n      ansible_connection: local\n      runtime: native\n"
        f"      ansible_python_interpreter: {fake}\n"
    )
    return inventory, pidfile


def wait_for(path: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.1)


def test_sigterm_ends_the_workload_and_marks_the_run_interrupted(tmp_path):
    inventory, pidfile = hanging_host(tmp_path)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host", "hang",
         "--inventory", str(inventory), "--runs-dir", str(runs)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(pidfile)
    workload_pid = int(pidfile.read_text())
    assert alive(workload_pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED == 130
    assert "interrupted; partial record in" in err
    deadline = time.monotonic() + 10
    while alive(workload_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(workload_pid)
    manifest = load_manifest(only_run(runs)).to_json()
    assert manifest["status"] == "interrupted"
    assert manifest["status_detail"] == "stopped by Ctrl-C or SIGTERM; the running workload was ended"
    assert verify_record(only_run(runs)) == []


def test_sigkill_leaves_a_manifest_that_says_killed(tmp_path):
    inventory, pidfile = hanging_host(tmp_path)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host", "hang",
         "--inventory", str(inventory), "--runs-dir", str(runs)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(pidfile)
    proc.kill()
    proc.wait(timeout=30)
    try:
        manifest = load_manifest(only_run(runs)).to_json()
        assert manifest["status"] == "killed"
        assert json.loads((only_run(runs) / "manifest.json").read_text())["status"] == "running"
    finally:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_step_timeout_ends_the_process_group(tmp_path):
    inventory, pidfile = hanging_host(tmp_path)
    kits = tmp_path / "kits"
    kits.mkdir()
    text = (REPO / "kits" / "smem-probe.yml").read_text().replace("timeout_s: 180", "timeout_s: 2")
    (kits / "smem-probe.yml").write_text(text)
    kit = load_kit_file(kits / "smem-probe.yml")
    host = load_inventory(inventory).host("hang")
    messages: list[str] = []
    outcome = run_kit(kit, kits / "smem-probe.yml", host, tmp_path / "runs", kits, say=messages.append)
    assert run_exit_code(outcome) == ExitCode.STEP_ERROR
    manifest = load_manifest(outcome.run_dir).to_json()
    probe = next(s for s in manifest["steps"] if s["name"] == "probe")
    assert (probe["status"], probe["reason"]) == ("timeout", "timed out after 2 s; the process group was ended")
    assert not alive(int(pidfile.read_text()))
    assert (outcome.run_dir / "steps" / "probe" / "step.log").read_text() == "probe started\n"
    assert "      timeout in" in "\n".join(messages)


def test_summary_appends_every_report_for_the_job_summary(tmp_path):
    runs = tmp_path / "runs"
    assert run_invoke("probe", "--runs-dir", str(runs)).returncode == 3
    summary = tmp_path / "summary.md"
    summary.write_text("existing line\n")
    proc = run_invoke("summary", "--runs-dir", str(runs), "--out", str(summary))
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert text.startswith("existing line\n# smem-probe on local: can't tell here (INCONCLUSIVE)\n")
    empty = run_invoke("summary", "--runs-dir", str(tmp_path / "none"))
    assert empty.returncode == 1
    assert "Nothing was recorded under" in empty.stdout


def test_sweep_task_on_a_machine_without_gpu_says_why(tmp_path):
    proc = run_invoke("sweep", "--runs-dir", str(tmp_path), "--json")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    out = json.loads(proc.stdout)
    steps = {s["name"]: s for s in load_manifest(out["run_dir"]).to_json()["steps"]}
    assert steps["sweep"]["status"] == "not_run"
    assert steps["sweep"]["reason"].startswith("not run: needs a CUDA GPU; no NVIDIA driver")
    assert steps["static-smem"]["reason"].startswith("not run: arch 'host' needs one GPU architecture on the host")


def test_ctrl_c_during_a_group_run_ends_the_local_hosts_steps_and_marks_each_run_interrupted(tmp_path):
    """Local hosts in a --group fan-out run in threads, where no signal lands: each stops on the group's STOP as an
    SSH host does (one launcher for both), well before the step's 180 s timeout."""
    hosts = {}
    for name in ("hang1", "hang2"):
        (tmp_path / name).mkdir()
        inventory, pidfile = hanging_host(tmp_path / name)
        hosts[name] = pidfile
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n    boxes:\n      hosts:\n" + "".join(
        f"        {name}:\n          ansible_connection: local\n          runtime: native\n"
        f"          ansible_python_interpreter: {tmp_path / name / 'python-hangs'}\n" for name in hosts))
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--group", "boxes",
         "--inventory", str(inventory), "--runs-dir", str(runs)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for pidfile in hosts.values():
        wait_for(pidfile)
    pids = [int(pidfile.read_text()) for pidfile in hosts.values()]
    assert all(alive(pid) for pid in pids)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == ExitCode.INTERRUPTED == 130, err
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [alive(pid) for pid in pids] == [False, False]
    records = sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(records) == 2
    for record in records:
        manifest = load_manifest(record).to_json()
        assert (manifest["host"]["name"] in hosts, manifest["status"]) == (True, "interrupted")
        assert (record / "steps" / "probe" / "step.log").read_text() == "probe started\n"  # what it wrote came back
        assert verify_record(record) == []
    # nothing of the runs is left on the hosts, and their locks are free
    for name in hosts:
        assert list((runs / ".hosts" / name / "runs").iterdir()) == []
        assert not (runs / ".hosts" / name / "lock").exists()
