"""A control process SIGKILLed while it launches a step (found by benchmarks/chaos.py, issue #28 item 7).

The record said the step was in flight, but the kill came after its params.json and before the wrapper's files:
`invoke collect` then said "the step directory is gone; step 'probe' cannot be collected", for ever, and the
host's lock stayed. Now the step is recorded as not run (the run was killed before it), the record completes,
the host is cleaned and its lock released.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run.collect import collect_run
from tests.conftest import REPO
from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, inventory_file, step

KILL_AFTER = """
import os, signal
from reprokit.hosts.transport import Transport
write_bytes = Transport.write_bytes
def killed_after(self, path, data):
    write_bytes(self, path, data)
    if path.endswith("/probe/" + KILL_AFTER):
        os.kill(os.getpid(), signal.SIGKILL)
Transport.write_bytes = killed_after
"""


def killed_while_launching(rig, tmp_path, after: str):
    """Run the probe kit in a control process SIGKILLed once it has written the probe's file ``after``."""
    inv_path = inventory_file(tmp_path / "inv.yml", rig.work,
                              ansible_python_interpreter=str(rig.inventory(RESULT_OK).host(HOST).python))
    script = f"KILL_AFTER = {after!r}\n" + KILL_AFTER + textwrap.dedent(f"""
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
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "killed" and manifest["in_flight"] == {"step": "probe", "since": manifest["in_flight"]["since"]}
    (remote_run,) = rig.remote_runs()
    assert (rig.work / "lock").exists()
    return run_dir, sorted(p.name for p in (remote_run / "probe").iterdir())


def test_killed_after_the_steps_params_it_is_collected_with_that_step_not_run(rig, tmp_path):
    run_dir, on_host = killed_while_launching(rig, tmp_path, "params.json")
    assert on_host == ["params.json"]

    collect_run(run_dir, rig.inventory(RESULT_OK), rig.options(), KIT.parent, say=rig.messages.append, wait_s=60)
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete"
    assert step(manifest)["status"] == "not_run"
    assert step(manifest)["reason"] == "not run: the run was killed before this step; run the kit again"
    assert manifest["fingerprint"] is not None
    assert verify_record(run_dir) == []
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()


def test_killed_after_the_exit_code_placeholder_collect_ends_the_step_as_never_started(rig, tmp_path):
    run_dir, on_host = killed_while_launching(rig, tmp_path, "exit_code")
    assert on_host == ["exit_code", "params.json"]
    collect_run(run_dir, rig.inventory(RESULT_OK), rig.options(), KIT.parent, say=rig.messages.append, wait_s=60)
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete"
    assert step(manifest)["status"] == "error"
    assert step(manifest)["reason"] == "it never started: the run was stopped while it launched the step"
    assert verify_record(run_dir) == []
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()
