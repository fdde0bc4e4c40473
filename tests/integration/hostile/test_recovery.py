"""No fault loses a finished step's results: they are pulled back, or still on the host for `invoke collect`."""

from __future__ import annotations

import dataclasses
import pwd
import signal
import subprocess
import sys
import textwrap
import time
import types

import pytest

from reprokit.commands.run import run_exit_code
from reprokit.errors import ExitCode, HostError
from reprokit.hosts.pullback import PullBack
from reprokit.records.run_dir import load_manifest, resolve_run_dir, verify_record
from reprokit.run.collect import collect_run
from tests.conftest import REPO, run_invoke
from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, inventory_file, step
from tests.integration.remote.conftest import alive, sshd_master_pid

HOME_UID = pwd.getpwnam("rkuser").pw_uid

BIG = 'head -c 300000 /dev/urandom > big.bin; ' + RESULT_OK


def collect(rig, run_dir, inv, **fields):
    return collect_run(run_dir, inv, rig.options(**fields), KIT.parent, say=rig.messages.append, wait_s=60)


def assert_collected(rig, outcome_dir, inv, **fields):
    collected = collect(rig, outcome_dir, inv, **fields)
    manifest = load_manifest(outcome_dir).to_json()
    assert manifest["status"] == "complete", rig.messages
    assert step(manifest)["collected"] is True and step(manifest)["status"] == "ok"
    assert (outcome_dir / "steps" / "probe" / "big.bin").stat().st_size == 300000
    assert verify_record(outcome_dir) == []
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()
    return collected


def test_byte_cap_stops_the_pull_keeps_the_host_copy_and_collect_by_id_finishes(rig):
    outcome, manifest, inv = rig.run(BIG, options=rig.options(max_pull_bytes=200000))
    assert run_exit_code(outcome) == ExitCode.HOST_ERROR
    assert manifest["status"] == "incomplete"
    assert manifest["detached"]["step"] == "probe"
    assert "passes this run's cap of 200000 bytes (--max-pull-bytes); the files stay on the host" in manifest["status_detail"]
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "big.bin").stat().st_size == 300000
    assert not (rig.work / "lock").exists()  # nothing runs there any more: the host is free for others
    assert resolve_run_dir(outcome.run_dir.name, rig.runs) == outcome.run_dir
    assert_collected(rig, resolve_run_dir(outcome.run_dir.name, rig.runs), inv)


def test_ctrl_c_during_the_pull_back_keeps_the_results_on_the_host(rig, monkeypatch):
    original = PullBack._receive

    def interrupted(self, stream, rf, offset, out_dir, on_bytes):
        if rf.rel == "big.bin":
            raise KeyboardInterrupt
        return original(self, stream, rf, offset, out_dir, on_bytes)

    monkeypatch.setattr(PullBack, "_receive", interrupted)
    outcome, manifest, inv = rig.run(BIG)
    monkeypatch.setattr(PullBack, "_receive", original)
    assert run_exit_code(outcome) == ExitCode.INTERRUPTED
    assert manifest["status"] == "incomplete"
    assert manifest["status_detail"] == "stopped by Ctrl-C or SIGTERM; step 'probe' was ended, its files stay on the host"
    assert not (outcome.run_dir / "report.md").exists()
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "big.bin").exists() and (remote_run / "probe" / "result.json").exists()
    assert_collected(rig, outcome.run_dir, inv)


def test_host_lost_during_the_pull_back_ends_detached_and_collect_finishes(rig, monkeypatch):
    original = PullBack.pull

    def vanish_then_pull(self, remote_dir, out_dir, on_bytes=None):
        if remote_dir.endswith("/probe"):
            settings = self.transport.settings  # nothing listens on port 1: every reconnect is refused
            self.transport.settings = dataclasses.replace(settings, target=dataclasses.replace(settings.target, port=1))
            self.transport.conn.client.get_transport().close()
        return original(self, remote_dir, out_dir, on_bytes)

    monkeypatch.setattr(PullBack, "pull", vanish_then_pull)
    outcome, manifest, inv = rig.run(BIG, options=rig.options(reconnect_attempts=1))
    monkeypatch.setattr(PullBack, "pull", original)
    assert run_exit_code(outcome) == ExitCode.HOST_ERROR
    assert manifest["status"] == "detached"
    assert manifest["status_detail"].startswith(f"host '{HOST}': lost the connection and could not reconnect:")
    assert manifest["status_detail"].endswith("step 'probe' ended, its files stay on the host")
    assert not any("Traceback" in m for m in rig.messages)
    assert (rig.work / "lock").exists()  # the host could not be reached to release it; collect does
    # while the host stays away, collect says so in one line and changes nothing
    away = rig.inventory(BIG)
    away.hosts[HOST] = dataclasses.replace(away.host(HOST), port=1)
    with pytest.raises(HostError) as stays_away:
        collect(rig, outcome.run_dir, away)
    assert str(stays_away.value).startswith(f"host '{HOST}' (10.213.0.12:1): cannot connect (nothing answered on that port: refused or unreachable); check the address")
    assert load_manifest(outcome.run_dir).to_json()["status"] == "detached"
    assert_collected(rig, outcome.run_dir, inv)


def test_a_control_process_killed_with_sigkill_can_be_collected(rig, tmp_path):
    inv_path = inventory_file(tmp_path / "inv.yml", rig.work, ansible_python_interpreter=str(
        rig.inventory(f'echo started > {rig.work}/started; sleep 2; ' + BIG).host(HOST).python))
    script = textwrap.dedent(f"""
        from pathlib import Path
        from reprokit.hosts.axes import load_inventory
        from reprokit.config.kit import load_kit_file
        from reprokit.hosts.factory import ConnectOptions
        from reprokit.run.kit_run import run_kit
        inv = load_inventory({str(inv_path)!r})
        kit = Path({str(KIT)!r})
        run_kit(load_kit_file(kit), kit, inv.host({HOST!r}), Path({str(rig.runs)!r}), kit.parent, say=print,
                inventory=inv, options=ConnectOptions(known_hosts=Path({str(rig.known)!r})))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (rig.work / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not alive(proc.pid)
    (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "killed" and manifest["in_flight"]["step"] == "probe"
    assert (rig.work / "lock").exists()
    assert_collected(rig, run_dir, rig.inventory(BIG))


def test_no_space_here_stops_before_writing_and_keeps_the_host_copy(rig, tmp_path):
    rig.runs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80m", "tmpfs", str(rig.runs)], check=True)
    try:
        outcome, manifest, _ = rig.run('head -c 20000000 /dev/zero > big.bin; ' + RESULT_OK)
        assert run_exit_code(outcome) == ExitCode.HOST_ERROR
        assert manifest["status"] == "incomplete"
        detail = manifest["status_detail"]
        assert detail.startswith("this machine has ") and detail.endswith(
            f"MiB free in {outcome.run_dir / 'steps' / 'probe'}, probe needs 20 MiB from host '{HOST}' and 64 MiB are"
            " kept free; free space there; the files stay on the host")  # issue #40: the reserve named
        assert not (outcome.run_dir / "steps" / "probe" / "big.bin").exists()
        (remote_run,) = rig.remote_runs()
        assert (remote_run / "probe" / "big.bin").stat().st_size == 20000000
    finally:
        subprocess.run(["umount", "-l", str(rig.runs)], check=False)


def test_a_full_remote_disk_is_named_not_an_sftp_failure(rig):
    small = rig.work / "small"
    small.mkdir()
    in_host = ["nsenter", "--mount", "--target", str(sshd_master_pid(HOST))]  # the host's own mount namespace
    subprocess.run([*in_host, "mount", "-t", "tmpfs", "-o", "size=1m,uid=" + str(HOME_UID) + ",gid=" + str(HOME_UID),
                    "tmpfs", str(small)], check=True)
    try:
        subprocess.run([*in_host, "sh", "-c", f"head -c 2000000 /dev/zero > {small}/fill"], check=False)
        with pytest.raises(HostError) as full:
            rig.run(RESULT_OK, workdir=small)
        assert str(full.value).startswith(f"host '{HOST}': cannot ")
        assert str(full.value).endswith(f"; host '{HOST}' has no space left in {small}")
        assert not rig.runs.exists() or list(rig.runs.iterdir()) == []
    finally:
        subprocess.run([*in_host, "umount", "-l", str(small)], check=False)


def test_a_disk_that_fills_while_writing_is_its_own_error(rig, monkeypatch):
    """ENOSPC mid-file (another process filled the disk after the free-space check) stops the pull, not a retry loop."""
    from reprokit.hosts import pullback  # noqa: PLC0415

    rig.runs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(rig.runs)], check=True)
    monkeypatch.setattr(pullback, "FREE_SPACE_RESERVE_BYTES", 0)
    monkeypatch.setattr(pullback.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=1 << 40))  # it saw room
    try:
        outcome, manifest, _ = rig.run('head -c 6000000 /dev/zero > big.bin; ' + RESULT_OK)
        assert run_exit_code(outcome) == ExitCode.HOST_ERROR
        assert manifest["status"] == "incomplete"
        assert manifest["status_detail"] == (f"this machine's disk is full at {outcome.run_dir / 'steps' / 'probe'} (No"
                                             " space left on device) while pulling big.bin; free space there; the files"
                                             " stay on the host")
        (remote_run,) = rig.remote_runs()
        assert (remote_run / "probe" / "big.bin").stat().st_size == 6000000
    finally:
        subprocess.run(["umount", "-l", str(rig.runs)], check=False)



def test_the_byte_cap_is_configurable_for_invoke_repro(rig, tmp_path):
    rig.inventory(BIG)
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), "--quiet",
                      env={"INVOKE_REPROKIT_MAX_PULL_BYTES": "200K"}, timeout=120)
    assert proc.returncode == ExitCode.HOST_ERROR, proc.stderr
    (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "incomplete"
    assert "passes this run's cap of 204800 bytes" in manifest["status_detail"]
    assert f"`invoke collect {run_dir.name}`" in proc.stderr


def test_a_host_disk_that_fills_while_the_code_unpacks_is_one_line_naming_it(rig):
    """200 KB free: the code's archive uploads, its unpacking fails; tar's reason is said, not its last line."""
    small = rig.work / "small300k"
    small.mkdir()
    in_host = ["nsenter", "--mount", "--target", str(sshd_master_pid(HOST))]
    subprocess.run([*in_host, "mount", "-t", "tmpfs", "-o", "size=2m,uid=" + str(HOME_UID) + ",gid=" + str(HOME_UID),
                    "tmpfs", str(small)], check=True)
    try:
        subprocess.run([*in_host, "sh", "-c", f"head -c {2048 * 1024 - 200 * 1024} /dev/zero > {small}/fill"], check=True)
        with pytest.raises(HostError) as full:
            rig.run(RESULT_OK, workdir=small)
        message = str(full.value)
        assert "\n" not in message and "Exiting with failure status" not in message, message
        assert message.startswith(f"host '{HOST}': no space left in {small} (tar: "), message
        assert message.endswith("No space left on device); free space there or set a larger `workdir` for the host")
    finally:
        subprocess.run([*in_host, "umount", "-l", str(small)], check=False)
