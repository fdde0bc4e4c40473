"""`invoke repro` against real OpenSSH servers: host keys, gateways, locks, timeouts, Ctrl-C, drops, full disks, secrets."""

from __future__ import annotations

import json
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from reprokit.commands.run import run_exit_code
from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run.collect import collect_run
from reprokit.run.kit_run import run_kit
from tests.conftest import REPO, run_invoke
from tests.integration.remote.conftest import (
    alive,
    fake_python,
    host_workdir,
    known_hosts_for,
    sshd_master_pid,
    write_inventory,
)

RESULT_OK = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
             ' echo "probe done"; exit 0')


def runs_in(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")) if path.exists() else []


def invoke_repro(tmp_path: Path, inventory: Path, known_hosts: Path, *extra: str, kit: str = "smem-probe"):
    return run_invoke("repro", kit, "--inventory", str(inventory), "--known-hosts", str(known_hosts),
                      "--runs-dir", str(tmp_path / "runs"), *extra, timeout=300)


def test_unknown_host_key_is_refused_and_nothing_is_written(tmp_path):
    work = host_workdir("h1", "unknown-key")
    inventory = write_inventory(tmp_path / "inv.yml", {"h1": {"workdir": work}})
    known = tmp_path / "known_hosts"
    known.write_text("")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h1")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.strip() == (
        f"error: host 'h1' (10.213.0.11:22): its host key is not in {known}; add the key there (ssh-keyscan, verified"
        " out of band) or connect once with --accept-new-host-key (trust on first use)")
    assert runs_in(tmp_path / "runs") == []
    assert list(work.iterdir()) == []


def test_accept_new_host_key_then_strict(tmp_path):
    work = host_workdir("h2", "tofu")
    inventory = write_inventory(tmp_path / "inv.yml", {"h2": {"workdir": work}})
    known = tmp_path / "known_hosts"
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h2", "--accept-new-host-key", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr  # no torch on the host: torch-and-driver-agree cannot say
    assert "added the host key of 10.213.0.12 (ssh-ed25519 SHA256:" in proc.stderr
    saved = known.read_text().split()
    assert saved[:2] == ["10.213.0.12", "ssh-ed25519"]
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h2", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    assert known.read_text().count("\n") == 1


def test_changed_host_key_of_a_gateway_stops_the_run(tmp_path):
    work = host_workdir("priv", "changed")
    inventory = write_inventory(tmp_path / "inv.yml", {"gw": {}, "priv": {"workdir": work, "proxy_jump": "gw"}})
    known = known_hosts_for(tmp_path / "known_hosts", "gw", "priv")
    # swap in h1's key for the gateway's address: as if the gateway were replaced
    h1_key = known_hosts_for(tmp_path / "h1", "h1").read_text().split()[2]
    lines = known.read_text().splitlines()
    known.write_text(f"10.213.0.2 ssh-ed25519 {h1_key}\n{lines[1]}\n")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "priv", "--accept-new-host-key")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.startswith(f"error: host 'gw' (10.213.0.2:22): HOST KEY CHANGED: {known} has ssh-ed25519 SHA256:")
    assert "This can be an attack" in proc.stderr
    assert runs_in(tmp_path / "runs") == []


def test_run_through_the_gateway_pulls_back_a_verified_record(tmp_path):
    work = host_workdir("priv", "gateway")
    inventory = write_inventory(tmp_path / "inv.yml", {"gw": {}, "priv": {"workdir": work, "proxy_jump": "gw"}})
    known = known_hosts_for(tmp_path / "known_hosts", "gw", "priv")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "priv", "--json", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete"
    assert manifest["host"]["name"] == "priv" and manifest["host"]["connection"] == "ssh"
    assert manifest["fingerprint"]["host"]["hostname"]  # taken on the host
    assert [d["name"] for d in manifest["fingerprint"]["devices"]] == ["NVIDIA RTX PRO 6000 Blackwell (reprokit test double)"]
    steps = {s["name"]: s for s in manifest["steps"]}
    assert steps["probe"]["status"] == "ok" and steps["probe"]["exit_code"] == 0
    assert verify_record(run_dir) == []
    (device,) = json.loads((run_dir / "steps" / "probe" / "result.json").read_text())["devices"]
    assert (device["launch_at_optin_limit"]["ok"], device["launch_past_optin_limit"]["error_name"]) == (
        True, "CUDA_ERROR_INVALID_VALUE")
    verdict = json.loads(proc.stdout)
    assert [(e["name"], e["status"]) for e in verdict["expectations"] if e["status"] != "PASS"] == [
        ("torch-and-driver-agree", "INCONCLUSIVE")]  # the host has no torch: the probe writes null
    # verified, so the host's copy is gone; the lock is released; the workload code and the host's caches stay
    assert sorted(p.name for p in work.iterdir()) == ["cache", "code", "runs"]
    assert list((work / "runs").iterdir()) == []


def test_busy_and_stale_locks_are_reported_and_unlock_removes_a_stale_one(tmp_path):
    work = host_workdir("h3", "lock")
    inventory = write_inventory(tmp_path / "inv.yml", {"h3": {"workdir": work}})
    known = known_hosts_for(tmp_path / "known_hosts", "h3")
    lock = work / "lock"
    lock.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])
    (lock / "owner.json").write_text(json.dumps({"run_id": "R-busy", "control_host": socket.gethostname(),
                                                 "pid": sleeper.pid, "since": "2026-11-29T00:00:00Z"}))
    for path in (lock, lock / "owner.json"):
        shutil.chown(path, "rkuser", "rkuser")
    try:
        proc = invoke_repro(tmp_path, inventory, known, "--host", "h3")
        assert proc.returncode == ExitCode.HOST_ERROR
        assert proc.stderr.strip() == (f"error: host 'h3' is busy: run R-busy (pid {sleeper.pid} on {socket.gethostname()},"
                                       " since 2026-11-29T00:00:00Z) holds its lock; wait for it to finish, or run on another host")
        refused = run_invoke("unlock", "--host", "h3", "--inventory", str(inventory), "--known-hosts", str(known))
        assert refused.returncode == ExitCode.HOST_ERROR and "is busy" in refused.stderr
    finally:
        sleeper.kill()
        sleeper.wait()
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h3")
    assert proc.returncode == ExitCode.HOST_ERROR
    assert f"host 'h3' has a STALE lock: run R-busy (pid {sleeper.pid}" in proc.stderr
    assert "`invoke collect R-busy`" in proc.stderr and "`invoke unlock --host h3`" in proc.stderr
    assert lock.exists()
    done = run_invoke("unlock", "--host", "h3", "--inventory", str(inventory), "--known-hosts", str(known))
    assert done.returncode == 0 and "removed the lock of run R-busy on host 'h3'" in done.stdout + done.stderr
    assert not lock.exists()
    assert invoke_repro(tmp_path, inventory, known, "--host", "h3", "--quiet").returncode == ExitCode.INCONCLUSIVE


def test_step_timeout_ends_the_remote_process_tree(tmp_path):
    work = host_workdir("h4", "timeout")
    python = fake_python(work, f'    echo $$ > {work}/hang.pid; echo "probe started"; sleep 300 & wait')
    inventory = write_inventory(tmp_path / "inv.yml", {"h4": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h4")
    kits = tmp_path / "kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text().replace("timeout_s: 180", "timeout_s: 3"))
    inv = load_inventory(inventory)
    outcome = run_kit(load_kit_file(kits / "smem-probe.yml"), kits / "smem-probe.yml", inv.host("h4"), tmp_path / "runs",
                      kits, say=lambda m: None, inventory=inv, options=ConnectOptions(known_hosts=known))
    assert run_exit_code(outcome) == ExitCode.STEP_ERROR
    manifest = load_manifest(outcome.run_dir).to_json()
    probe = next(s for s in manifest["steps"] if s["name"] == "probe")
    assert (probe["status"], probe["reason"]) == ("timeout", "timed out after 3 s; the process group was ended")
    assert (outcome.run_dir / "steps" / "probe" / "step.log").read_text() == "probe started\n"
    hang_pid = int((work / "hang.pid").read_text())
    assert not alive(hang_pid)
    out = subprocess.run(["pgrep", "-f", f"{work}/fake-python"], capture_output=True, text=True).stdout
    assert out.strip() == ""
    assert verify_record(outcome.run_dir) == []


def test_ctrl_c_ends_the_remote_step_and_keeps_what_ran(tmp_path):
    work = host_workdir("h5", "ctrlc")
    python = fake_python(work, f'    echo $$ > {work}/hang.pid; echo "probe started"; sleep 300 & wait')
    inventory = write_inventory(tmp_path / "inv.yml", {"h5": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h5")
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host", "h5",
         "--inventory", str(inventory), "--known-hosts", str(known), "--runs-dir", str(tmp_path / "runs")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (work / "hang.pid").exists() or not (work / "hang.pid").read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1.0)  # let the log line stream back
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert not alive(int((work / "hang.pid").read_text())), err
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "interrupted"
    assert (run_dir / "steps" / "probe" / "step.log").read_text() == "probe started\n"
    assert not (work / "lock").exists()


def test_cut_link_detaches_and_collect_brings_everything_back(tmp_path):
    work = host_workdir("h6", "cut")
    python = fake_python(work, f'    echo "probe started"; sleep 8; {RESULT_OK}')
    inventory = write_inventory(tmp_path / "inv.yml", {"h6": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h6")
    inv = load_inventory(inventory)
    kit_path = REPO / "kits" / "smem-probe.yml"
    options = ConnectOptions(known_hosts=known, reconnect_attempts=2, io_timeout_s=2.0)
    messages: list[str] = []

    def cut_when_started():
        deadline = time.monotonic() + 60
        logs = work / "runs"
        while time.monotonic() < deadline and not any(
                "probe started" in p.read_text() for p in logs.glob("*/probe/step.log")):
            time.sleep(0.05)
        subprocess.run(["ip", "link", "set", "rkv-h6", "down"], check=True)

    cutter = threading.Thread(target=cut_when_started)
    cutter.start()
    try:
        outcome = run_kit(load_kit_file(kit_path), kit_path, inv.host("h6"), tmp_path / "runs", REPO / "kits",
                          say=messages.append, inventory=inv, options=options)
    finally:
        cutter.join()
        subprocess.run(["ip", "link", "set", "rkv-h6", "up"], check=True)
    assert run_exit_code(outcome) == ExitCode.HOST_ERROR, messages
    manifest = load_manifest(outcome.run_dir).to_json()
    assert manifest["status"] == "detached"
    assert manifest["detached"]["step"] == "probe"
    assert any("invoke collect" in m for m in messages)
    assert (work / "lock").exists(), messages  # the run still owns the host
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("10.213.0.16", 22), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "h6 did not come back after the link was restored"
            time.sleep(0.2)
    collected = collect_run(outcome.run_dir, inv, options, REPO / "kits", say=messages.append, wait_s=60)
    manifest = load_manifest(outcome.run_dir).to_json()
    assert manifest["status"] == "complete"
    probe = next(s for s in manifest["steps"] if s["name"] == "probe")
    assert probe["status"] == "ok" and probe["collected"] is True
    assert (outcome.run_dir / "steps" / "probe" / "step.log").read_text() == "probe started\nprobe done\n"
    assert collected.verdict.verdict == "FAIL"  # the double reports no devices: 'no values at devices[*]...'
    assert verify_record(outcome.run_dir) == []
    assert not (work / "lock").exists()
    assert list((work / "runs").iterdir()) == []


def test_sshd_killed_mid_transfer_resumes_and_verifies(tmp_path):
    work = host_workdir("h7", "resume")
    body = (f'    head -c 48000000 /dev/urandom > big.bin; {RESULT_OK}')
    python = fake_python(work, body)
    inventory = write_inventory(tmp_path / "inv.yml", {"h7": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h7")
    inv = load_inventory(inventory)
    kit_path = REPO / "kits" / "smem-probe.yml"
    from reprokit.hosts.pullback import PullBack

    killed = []
    original = PullBack._receive

    def pull_and_kill(self, stream, rf, offset, out_dir, on_bytes):
        def count(n):
            if rf.rel == "big.bin" and not killed and self.pull_stats.bytes > 8_000_000:
                killed.append(True)
                subprocess.run(["pkill", "-KILL", "-P", str(sshd_master_pid("h7"))])
            if on_bytes:
                on_bytes(n)
        return original(self, stream, rf, offset, out_dir, count)

    PullBack._receive = pull_and_kill
    try:
        outcome = run_kit(load_kit_file(kit_path), kit_path, inv.host("h7"), tmp_path / "runs", REPO / "kits",
                          say=lambda m: None, inventory=inv, options=ConnectOptions(known_hosts=known, io_timeout_s=5.0))
    finally:
        PullBack._receive = original
    assert killed == [True]
    manifest = load_manifest(outcome.run_dir).to_json()
    assert manifest["status"] == "complete"
    big = outcome.run_dir / "steps" / "probe" / "big.bin"
    assert big.stat().st_size == 48_000_000
    assert manifest["artifacts"]["steps/probe/big.bin"]["bytes"] == 48_000_000
    assert not list(big.parent.glob("*.part"))
    assert verify_record(outcome.run_dir) == []


def test_full_remote_disk_gives_a_clear_error_and_a_complete_record(tmp_path):
    work = host_workdir("h8", "diskfull")
    small = work / "small"
    small.mkdir()
    user = pwd.getpwnam("rkuser")
    # The host's own mount namespace (`ip netns exec` gave its sshd one): the small disk is the host's, not ours.
    in_host = ["nsenter", "--mount", "--target", str(sshd_master_pid("h8"))]
    subprocess.run([*in_host, "mount", "-t", "tmpfs", "-o", f"size=1m,uid={user.pw_uid},gid={user.pw_gid}", "tmpfs",
                    str(small)], check=True)
    try:
        python = fake_python(work, '    echo "probe started"; head -c 3000000 /dev/zero > fill.bin; exit 1')
        inventory = write_inventory(tmp_path / "inv.yml", {"h8": {"workdir": small, "ansible_python_interpreter": python}})
        known = known_hosts_for(tmp_path / "known_hosts", "h8")
        proc = invoke_repro(tmp_path, inventory, known, "--host", "h8", "--json", "--quiet")
        (run_dir,) = runs_in(tmp_path / "runs")
        manifest = load_manifest(run_dir).to_json()
        probe = next(s for s in manifest["steps"] if s["name"] == "probe")
        assert probe["status"] == "error"
        assert probe["reason"] == (f"exit code 1: the workload wrote no result.json; host 'h8' has no space left in {small};"
                                   " the log ends with: head: error writing 'standard output': No space left on device")
        assert proc.returncode == ExitCode.STEP_ERROR
        assert manifest["status"] == "complete" and verify_record(run_dir) == []
        assert "No space left on device" in (run_dir / "steps" / "probe" / "step.log").read_text()
    finally:
        subprocess.run([*in_host, "umount", "-l", str(small)], check=False)


def test_secrets_reach_the_workload_only_by_file_and_are_redacted(tmp_path, monkeypatch):
    work = host_workdir("h1", "secrets")
    secret = "hf_TESTSECRET_0123456789"
    body = (f'    ls -l .secrets.sh 2>&1 | cut -c1-10 > mode.txt; ps -eo args | grep -c {secret} > ps.txt;'
            ' echo "token is $HF_TOKEN"; echo "$HF_TOKEN" > seen.txt; ' + RESULT_OK)
    python = fake_python(work, body)
    inventory = write_inventory(tmp_path / "inv.yml", {"h1": {"workdir": work, "ansible_python_interpreter": python}})
    known = known_hosts_for(tmp_path / "known_hosts", "h1")
    kits = tmp_path / "kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text() + "\nsecrets: [HF_TOKEN]\n")
    inv = load_inventory(inventory)
    monkeypatch.setenv("HF_TOKEN", secret)
    lines: list[str] = []
    outcome = run_kit(load_kit_file(kits / "smem-probe.yml"), kits / "smem-probe.yml", inv.host("h1"), tmp_path / "runs",
                      kits, say=lines.append, stream=lines.append, inventory=inv, options=ConnectOptions(known_hosts=known))
    step = outcome.run_dir / "steps" / "probe"
    assert (step / "step.log").read_text() == "token is ***\nprobe done\n"
    assert (step / "seen.txt").read_text() == "***\n"
    assert (step / "mode.txt").read_text().strip() == "ls: cannot"  # sourced and deleted before the workload started
    assert (step / "ps.txt").read_text().strip() == "1"  # only the grep itself: no command line carries it
    assert "token is ***" in lines
    everything = b"".join(p.read_bytes() for p in outcome.run_dir.rglob("*") if p.is_file())
    assert secret.encode() not in everything
    assert load_manifest(outcome.run_dir).to_json()["secrets"] == ["HF_TOKEN"]
    assert verify_record(outcome.run_dir) == []


def test_group_fan_out_reports_each_host_and_survives_a_bad_one(tmp_path):
    hosts = {"h2-fan": {"workdir": host_workdir("h2", "fan")}, "h3-fan": {"workdir": host_workdir("h3", "fan")},
             "h4-fan": {"workdir": host_workdir("h4", "fan")}}
    inventory = write_inventory(tmp_path / "inv.yml", hosts, groups={"rack": list(hosts)})
    known = known_hosts_for(tmp_path / "known_hosts", "h2", "h3")  # h4's key is unknown
    proc = invoke_repro(tmp_path, inventory, known, "--group", "rack", "--json", "--quiet")
    rows = {r["host"]: r for r in json.loads(proc.stdout)}
    assert rows["h2-fan"]["verdict"] == rows["h3-fan"]["verdict"] == "INCONCLUSIVE"
    assert rows["h4-fan"]["verdict"] == "ERROR" and "its host key is not in" in rows["h4-fan"]["error"]
    assert proc.returncode == ExitCode.HOST_ERROR
    assert len(runs_in(tmp_path / "runs")) == 2


def test_a_host_without_a_gpu_is_fingerprinted_as_one_and_its_probe_says_so(tmp_path):
    work = host_workdir("h4", "no-gpu")
    inventory = write_inventory(tmp_path / "inv.yml", {"h4": {"workdir": work}}, gpu=False)
    known = known_hosts_for(tmp_path / "known_hosts", "h4")
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h4", "--json", "--quiet")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir).to_json()
    assert (manifest["fingerprint"]["gpu_status"], manifest["fingerprint"]["devices"]) == ("no_driver", [])
    (probe,) = manifest["steps"]
    assert (probe["status"], probe["exit_code"]) == ("no_driver", 3)  # the probe says it itself (needs_gpu=False)
    assert verify_record(run_dir) == []
