"""A host behind two gateways, against the real sshd test hosts: rk-priv through rk-gw, entered twice.

The chain is this machine -> gw-outer (rk-gw) -> gw-inner (rk-gw again, reached from inside its own namespace:
a hop of its own, with its own settings) -> priv. Traffic between two test hosts' namespaces does not cross this
machine's bridge, and each sshd listens on its one address, so the second gateway is the first one entered again.
Both SSH clients (Paramiko for commands, the OpenSSH client for bulk copies) come from the transport's one
SSHSettings; they must take the same route with each hop's own settings, so both fail at the same hop. Ansible's
ProxyCommand (``provision.ansible_command``) must take the same route too.
"""

from __future__ import annotations

import shlex
import subprocess
import time

import pytest

from reprokit.errors import HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, connection_for
from reprokit.hosts.provision import ansible_command
from tests.integration.remote.conftest import ADDRESSES, REASON, STATE, known_hosts_for, write_inventory

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
GW, PRIV = ADDRESSES["gw"], ADDRESSES["priv"]
GW_LOG = STATE / "gw" / "sshd.log"


def _transport(tmp_path, inner_user: str = "rkuser"):
    inventory = load_inventory(write_inventory(tmp_path / "inv.yml", {
        "gw-outer": {}, "gw-inner": {"proxy_jump": "gw-outer", "ansible_user": inner_user},
        "priv": {"proxy_jump": "gw-inner"}}))
    known_hosts = known_hosts_for(tmp_path / "known_hosts", "gw", "priv")
    options = ConnectOptions(known_hosts=known_hosts, ssh_config="none")
    return connection_for(inventory.host("priv"), inventory, options, say=lambda m: None), known_hosts


def _gw_log_has(offset: int, *needles: str, wait_s: float = 10.0) -> bool:
    """Whether the gateway's sshd logged every needle after ``offset`` (it may log a moment after the client ends)."""
    deadline = time.monotonic() + wait_s
    while True:
        with open(GW_LOG, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode(errors="replace")
        if all(needle in text for needle in needles) or time.monotonic() > deadline:
            return all(needle in text for needle in needles)
        time.sleep(0.1)


def test_both_clients_take_the_same_two_hops(tmp_path):
    transport, _ = _transport(tmp_path)
    assert [(hop.name, hop.address) for hop in transport.settings.gateways] == [("gw-inner", GW), ("gw-outer", GW)]
    transport.connect()
    try:
        _, seen_by_priv, _ = transport.sh("echo $SSH_CONNECTION")
        inner = transport.conn.gateway  # the Fabric connection of the nearest gateway, opened on the way
        seen_by_inner = inner.run("echo $SSH_CONNECTION", hide=True, in_stream=False).stdout
        seen_by_outer = inner.gateway.run("echo $SSH_CONNECTION", hide=True, in_stream=False).stdout
        before = GW_LOG.stat().st_size
        proc = subprocess.run([*transport.openssh_argv(), "echo $SSH_CONNECTION"], capture_output=True, text=True,
                              timeout=60)
    finally:
        transport.close()
    assert seen_by_outer.split()[0] == "10.213.0.1"  # this machine
    assert seen_by_inner.split()[0] == GW  # the gateway, entered from itself
    assert seen_by_priv.split()[0] == "10.214.0.1" and seen_by_priv.split()[2] == PRIV
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "10.214.0.1" and proc.stdout.split()[2] == PRIV
    # the OpenSSH client entered the gateway twice too: from this machine, then from the gateway itself
    assert _gw_log_has(before, "Connection from 10.213.0.1 port", f"Connection from {GW} port")


def test_both_clients_use_the_inner_hops_own_user_and_fail_there(tmp_path):
    transport, known_hosts = _transport(tmp_path, inner_user="nobody")  # sshd allows rkuser only
    with pytest.raises(HostError) as paramiko_refused:
        transport.connect()
    assert str(paramiko_refused.value).startswith(f"host 'gw-inner' ({GW}:22): SSH authentication failed for user 'nobody'")
    before = GW_LOG.stat().st_size
    proc = subprocess.run([*transport.openssh_argv(), "true"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 255
    assert _gw_log_has(before, f"invalid user nobody {GW} port")  # entered from the gateway itself
    assert known_hosts.read_text().count("\n") == 2  # neither client wrote a key


def test_ansibles_proxy_command_takes_the_same_two_hops(tmp_path):
    """The third client of a host (ansible-playbook's ssh): its --ssh-common-args through the same chain."""
    transport, known_hosts = _transport(tmp_path)
    argv = ansible_command(transport.host, load_inventory(tmp_path / "inv.yml"), tmp_path / "inv.yml", check=True,
                           known_hosts=known_hosts)
    common = shlex.split(argv[argv.index("--ssh-common-args") + 1])
    before = GW_LOG.stat().st_size
    proc = subprocess.run(["ssh", *common, "-o", "BatchMode=yes", "-i", str(STATE / "id_ed25519"), "-l", "rkuser", PRIV,
                           "echo $SSH_CONNECTION"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "10.214.0.1" and proc.stdout.split()[2] == PRIV
    assert _gw_log_has(before, "Connection from 10.213.0.1 port", f"Connection from {GW} port")
