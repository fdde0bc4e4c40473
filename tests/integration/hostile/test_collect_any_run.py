"""`invoke collect` finishes any run that has files on the host, judged by the kit it ran with (issue #40).

A record whose control process ran on another machine (a replaced CI container) or whose pid was given to another
process since said "running" for ever, while the host's stale-lock message told the operator to collect it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reprokit.errors import ConfigError
from reprokit.records.run_dir import load_manifest
from reprokit.run.collect import collect_run
from tests.conftest import REPO
from tests.integration.hostile.conftest import HOST, KIT, inventory_file
from tests.integration.hostile.test_recovery import BIG, assert_collected


def killed_run(rig, tmp_path: Path, kit: Path = KIT) -> Path:
    """A run whose control process was SIGKILLed while its probe ran on the host (as test_recovery's)."""
    inv_path = inventory_file(tmp_path / "inv.yml", rig.work, ansible_python_interpreter=str(
        rig.inventory(f'echo started > {rig.work}/started; sleep 2; ' + BIG).host(HOST).python))
    script = textwrap.dedent(f"""
        from pathlib import Path
        from reprokit.hosts.axes import load_inventory
        from reprokit.config.kit import load_kit_file
        from reprokit.hosts.factory import ConnectOptions
        from reprokit.run.kit_run import run_kit
        inv = load_inventory({str(inv_path)!r})
        kit = Path({str(kit)!r})
        run_kit(load_kit_file(kit), kit, inv.host({HOST!r}), Path({str(rig.runs)!r}), kit.parent, say=print,
                inventory=inv, options=ConnectOptions(known_hosts=Path({str(rig.known)!r})))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (rig.work / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
    return run_dir


def edit_owner(run_dir: Path, **owner) -> None:
    path = run_dir / "manifest.json"
    record = json.loads(path.read_text())
    record["owner"].update(owner)
    path.write_text(json.dumps(record, indent=2))


def test_a_record_from_another_hostname_is_collected_with_force(rig, tmp_path):
    run_dir = killed_run(rig, tmp_path)
    edit_owner(run_dir, hostname="ci-runner-7f3c")  # the container that ran it was replaced
    assert load_manifest(run_dir).status == "running"
    with pytest.raises(ConfigError) as refused:
        collect_run(run_dir, rig.inventory(BIG), rig.options(), KIT.parent, wait_s=60)
    pid = load_manifest(run_dir).owner.pid
    assert str(refused.value) == (
        f"{run_dir}: the record says the run is still running on another machine (ci-runner-7f3c, pid {pid}): this one"
        " cannot see whether it still runs; if that process (or its machine, a replaced CI container) is gone, collect"
        " with --force")
    collected = collect_run(run_dir, rig.inventory(BIG), rig.options(), KIT.parent, say=rig.messages.append, wait_s=60,
                            force=True)
    assert collected.run_dir == run_dir and load_manifest(run_dir).status == "complete"
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()


def test_a_record_whose_pid_was_reused_is_killed_and_collected(rig, tmp_path):
    run_dir = killed_run(rig, tmp_path)
    time.sleep(1.5)
    newcomer = subprocess.Popen(["sleep", "120"])  # a process that got the pid after the run died
    try:
        edit_owner(run_dir, pid=newcomer.pid)
        manifest = load_manifest(run_dir)
        assert manifest.status == "killed"
        assert manifest.status_detail == (f"the run's process is gone and never finalised the manifest (its pid"
                                          f" {newcomer.pid} now names a process that started after the run)")
        assert_collected(rig, run_dir, rig.inventory(BIG))
    finally:
        newcomer.kill()
        newcomer.wait()


def test_collect_refuses_a_kit_edited_since_the_run_naming_both_hashes(rig, tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    kit = kits / "smem-probe.yml"
    shutil.copy(KIT, kit)
    run_dir = killed_run(rig, tmp_path, kit)
    ran = hashlib.sha256(kit.read_bytes()).hexdigest()
    kit.write_text(kit.read_text().replace("expect:", "# loosened after the kill\nexpect:", 1))
    now = hashlib.sha256(kit.read_bytes()).hexdigest()
    with pytest.raises(ConfigError) as refused:
        collect_run(run_dir, rig.inventory(BIG), rig.options(), kits, wait_s=60)
    assert str(refused.value) == (f"{kit}: the kit changed since run {run_dir.name} ran: sha256 {now} now, {ran} in"
                                  f" {run_dir / 'manifest.json'}; restore the kit as it ran (e.g. from version control),"
                                  " then collect again")
    assert load_manifest(run_dir).status == "killed" and len(rig.remote_runs()) == 1  # nothing changed
    shutil.copy(KIT, kit)
    assert collect_run(run_dir, rig.inventory(BIG), rig.options(), kits, wait_s=60).run_dir == run_dir
    assert load_manifest(run_dir).status == "complete"


def test_an_edited_remote_dir_is_refused_and_nothing_is_pulled(rig, tmp_path):
    """Issue #40: an edited record's `remote_dir` pulled another directory's files (`.ssh/id_x`) into the record."""
    run_dir = killed_run(rig, tmp_path)
    path = run_dir / "manifest.json"
    record = json.loads(path.read_text())
    expected = record["in_flight"]["handle"]["remote_dir"]
    secret_dir = rig.work / "elsewhere"
    secret_dir.mkdir()
    (secret_dir / "id_x").write_text("PRIVATE KEY\n")
    (secret_dir / "exit_code").write_text("0\n")  # as a directory the attacker prepared: it looks launched
    record["in_flight"]["handle"]["remote_dir"] = str(secret_dir)
    path.write_text(json.dumps(record, indent=2))
    with pytest.raises(ConfigError) as refused:
        collect_run(run_dir, rig.inventory(BIG), rig.options(), KIT.parent, wait_s=60)
    assert str(refused.value) == (f"{path}: the step's remote_dir {str(secret_dir)!r} is not the run's directory"
                                  f" {expected!r} on the host; the record was edited: restore it")
    assert not list(run_dir.rglob("id_x")) and load_manifest(run_dir).status == "killed"
