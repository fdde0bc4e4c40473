"""A link reset just before the run cleans up on the host (found by benchmarks/chaos.py, issue #28 item 7).

Before, the clean-up failed on the dead connection, said "its lock may stay", and the host's lock was left:
every later run of that host was refused (STALE lock) until `invoke unlock`. Now the connection is reopened once
for the clean-up: the host's run directory is removed and its lock released.
"""

from __future__ import annotations

import os
import re
import subprocess

from reprokit.hosts.host_executor import HostExecutor
from reprokit.hosts.transport import Transport
from tests.integration.hostile.conftest import HOST, RESULT_OK, step
from tests.integration.remote.conftest import ADDRESSES


def reset_my_links(address: str) -> int:
    """Destroy this process's TCP connections to the host's sshd (`ss -K`): a link reset, seen from here."""
    out = subprocess.run(["ss", "-tnpH", "dst", f"{address}:22"], capture_output=True, text=True).stdout
    ports = [line.split()[3].rsplit(":", 1)[1] for line in out.splitlines()
             if str(os.getpid()) in re.findall(r"pid=(\d+)", line)]
    for port in ports:
        subprocess.run(["ss", "-K", "-tnH", "dst", address, "dport", "=", ":22", "sport", "=", f":{port}"],
                       capture_output=True, check=True)
    return len(ports)


def test_a_link_reset_before_the_clean_up_still_releases_the_lock(rig, monkeypatch):
    finish, resets = HostExecutor.finish, []

    def reset_then_finish(self, keep_remote=False):
        resets.append(reset_my_links(ADDRESSES[HOST]))
        return finish(self, keep_remote)

    monkeypatch.setattr(HostExecutor, "finish", reset_then_finish)
    outcome, manifest, _ = rig.run(RESULT_OK)
    assert resets == [1]
    assert manifest["status"] == "complete" and step(manifest)["status"] == "ok"
    assert not any("could not clean up" in m for m in rig.messages), rig.messages
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()


def test_a_link_reset_while_a_step_is_launched_relaunches_it(rig, monkeypatch):
    """Before, the dropped link ended the run `failed` with a traceback (SSHException) or "cannot start step"."""
    write_bytes, resets = Transport.write_bytes, []

    def reset_after_params(self, path, data):
        write_bytes(self, path, data)
        if path.endswith("/probe/params.json") and not resets:
            resets.append(reset_my_links(ADDRESSES[HOST]))

    monkeypatch.setattr(Transport, "write_bytes", reset_after_params)
    outcome, manifest, _ = rig.run(RESULT_OK)
    assert resets == [1]
    assert manifest["status"] == "complete" and step(manifest)["status"] == "ok" and step(manifest)["exit_code"] == 0
    assert any(m.startswith(f"      connection to {HOST} lost while launching 'probe' (") for m in rig.messages)
    assert rig.remote_runs() == [] and not (rig.work / "lock").exists()
