"""SSH tarpits on a test host's own address: a port that takes the connection and never speaks, one whose banner
never ends, one that trickles lines that are not a banner. Each is one line in words, the same on every try, with
the bound that ended it; never paramiko's words or traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprokit.errors import ExitCode, HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.ssh import connection_for, open_connection
from tests.conftest import run_invoke
from tests.integration.remote.conftest import ADDRESSES, REASON, write_inventory

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

TARPIT = """
import socket, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", port))
server.listen(16)
def serve(peer):
    try:
        if mode == "endless-banner":
            peer.sendall(b"SSH-2.0-")
        while True:
            if mode != "silent":
                peer.sendall(b"x" if mode == "endless-banner" else b"not a banner\\r\\n")
            time.sleep(0.1)
    except OSError:
        pass
while True:
    threading.Thread(target=serve, args=(server.accept()[0],), daemon=True).start()
"""
MODES = {"silent": 2231, "endless-banner": 2232, "trickle": 2233}


@pytest.fixture(scope="module")
def tarpits():
    """The three tarpits, listening in h3's network namespace (next to its sshd on port 22)."""
    procs = [subprocess.Popen(["ip", "netns", "exec", "rk-h3", sys.executable, "-c", TARPIT, mode, str(port)])
             for mode, port in MODES.items()]
    deadline = time.monotonic() + 10
    for port in MODES.values():
        while True:
            try:
                socket.create_connection((ADDRESSES["h3"], port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"tarpit on port {port} did not start"
                time.sleep(0.1)
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


def problem(port: int) -> str:
    return f"port {port} took the connection, but no SSH server answered on it within 1 s (connect_timeout_s)"


def test_a_silent_port_is_one_line_on_the_console_with_its_bound(tmp_path: Path, tarpits):
    port = MODES["silent"]
    inv = write_inventory(tmp_path / "inv.yml", {"h3": {"ansible_port": port, "connect_timeout_s": 1,
                                                        "workdir": "/tmp/never"}})
    (tmp_path / "known_hosts").write_text("")
    proc = run_invoke("repro", "smem-probe", "--host", "h3", "--inventory", str(inv), "--known-hosts",
                      str(tmp_path / "known_hosts"), "--runs-dir", str(tmp_path / "runs"), timeout=120)
    assert proc.returncode == ExitCode.HOST_ERROR
    assert proc.stderr.splitlines() == [f"      connection to h3 failed ({problem(port)}); retrying in 1 s",
                                        f"      connection to h3 failed ({problem(port)}); retrying in 2 s",
                                        f"error: host 'h3' ({ADDRESSES['h3']}:{port}): cannot connect ({problem(port)});"
                                        f" check the port (ansible_port) in the inventory; try"
                                        f" `ssh -p {port} rkuser@{ADDRESSES['h3']}`"]
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []


@pytest.mark.parametrize("mode", ["endless-banner", "trickle"])
def test_a_banner_that_never_ends_or_never_comes_is_the_same_line(tmp_path: Path, tarpits, mode: str):
    port = MODES[mode]
    inv = load_inventory(write_inventory(tmp_path / "inv.yml", {"h3": {"ansible_port": port, "connect_timeout_s": 1,
                                                                        "workdir": "/tmp/never"}}))
    (tmp_path / "known_hosts").write_text("")
    conn = connection_for(inv.host("h3"), inv, tmp_path / "known_hosts")
    with pytest.raises(HostError) as refused:
        open_connection(conn, retries=1)
    assert str(refused.value) == (f"host 'h3' ({ADDRESSES['h3']}:{port}): cannot connect ({problem(port)}); check the"
                                  f" port (ansible_port) in the inventory; try `ssh -p {port} rkuser@{ADDRESSES['h3']}`")
