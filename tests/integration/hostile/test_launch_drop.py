"""sshd killed while the step's `cd && setsid` runs: the step may have started, so the run must not end `failed`.

The chaos run (benchmarks/chaos.py) found it: the channel closed without an exit status, which read as a failed
command ("`cd` failed", record `failed`) although the wrapper had started on the host. Here the launch command
itself kills its sshd (its shell's parent) once the wrapper is started, on the real test host.
"""

from __future__ import annotations

from reprokit.commands.run import run_exit_code
from reprokit.errors import ExitCode
from reprokit.hosts.transport import Transport
from reprokit.records.run_dir import verify_record
from tests.integration.hostile.conftest import RESULT_OK, step


def test_sshd_killed_during_the_launch_command_is_a_dropped_link_not_a_failed_step(rig, monkeypatch):
    original = Transport.sh
    killed = []

    def sh(self, command, *args, **kwargs):
        if "setsid -f" in command and ".partial" not in command and not killed and "/probe" in command:
            killed.append(command)
            command += "; sleep 0.3; kill -KILL $PPID"  # the session's sshd dies after the wrapper started
        return original(self, command, *args, **kwargs)

    monkeypatch.setattr(Transport, "sh", sh)
    outcome, manifest, _ = rig.run(RESULT_OK)
    assert len(killed) == 1
    assert manifest["status"] == "complete", (manifest.get("status_detail"), rig.messages)
    assert run_exit_code(outcome) == ExitCode.FAIL  # judged: the double lists no devices, so the expectations fail
    assert step(manifest)["status"] == "ok"
    assert any("lost while launching 'probe'" in m for m in rig.messages)
    assert verify_record(outcome.run_dir) == []
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()
