"""The Paramiko control connection and the OpenSSH bulk copy are both derived from one SSHSettings object.

A host behind two gateways, each hop with its own port, user, key and timeout, and one hop with a known_hosts
file of the SSH config: the two clients must name the same chain, hop by hop, and the same known_hosts files.
Nothing here connects (the real servers: tests/integration/remote/test_two_gateways.py).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import pytest

from reprokit.errors import ConfigError, HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.ssh import SSHSettings, fabric_connection, openssh_argv

KEY = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"  # a well-formed ssh-ed25519 blob


@pytest.fixture
def chain(tmp_path):
    """gpu (10.0.0.9:2209, key gpu) via inner (10.0.0.5:2205, user in) via bastion (10.0.0.1, user jump, key jump)."""
    (tmp_path / "inventory.yml").write_text(f"""all:
  hosts:
    gpu:
      ansible_host: 10.0.0.9
      ansible_port: 2209
      ansible_user: rk
      ansible_ssh_private_key_file: {tmp_path}/gpu_key
      connect_timeout_s: 7
      proxy_jump: inner
    inner:
      ansible_host: 10.0.0.5
      ansible_port: 2205
      ansible_user: in
      proxy_jump: bastion
    bastion:
      ansible_host: 10.0.0.1
      ansible_user: jump
      ansible_ssh_private_key_file: {tmp_path}/jump_key
""", encoding="utf-8")
    inventory = load_inventory(tmp_path / "inventory.yml")
    trusted = tmp_path / "their_known_hosts"  # as an SSH config's UserKnownHostsFile would name it for the bastion
    trusted.write_text(f"10.0.0.1 ssh-ed25519 {KEY}\n")
    inventory.hosts["bastion"] = dataclasses.replace(inventory.host("bastion"), known_hosts_files=(str(trusted),))
    return inventory, SSHSettings.for_host(inventory.host("gpu"), inventory, tmp_path / "known_hosts"), trusted


def _paramiko_hops(conn) -> list[dict]:
    """The target first, then each gateway nearest first, as the Fabric connections hold them."""
    hops = []
    while conn:
        keys = conn.connect_kwargs.get("key_filename")
        hops.append({"address": conn.host, "port": conn.port, "user": conn.user, "key": keys[0] if keys else None,
                     "timeout_s": conn.connect_timeout, "known_hosts": conn.client._host_keys_filename,
                     "trusts": conn.client._system_host_keys.lookup(conn.host) is not None})
        conn = conn.gateway or None
    return hops


def _percent_expand(text: str, host: str, port: int) -> str:
    """What an OpenSSH client does to its ProxyCommand before running it (``%h``, ``%p``, ``%%``)."""
    return re.sub(r"%(.)", lambda m: {"h": host, "p": str(port), "%": "%"}[m[1]], text)


def _openssh_hops(argv: list[str]) -> list[dict]:
    """The same, read back from the OpenSSH argv, each nested ProxyCommand expanded as its client would."""
    hops = []
    while argv:
        options = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "-o")
        flag = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-p", "-l", "-i")}
        known = options["UserKnownHostsFile"].split()
        hop = {"address": argv[-1], "port": int(flag["-p"]), "user": flag.get("-l"), "key": flag.get("-i"),
               "timeout_s": float(options["ConnectTimeout"]), "known_hosts": known[0], "trusts": known[1:]}
        hops.append(hop)
        assert options["StrictHostKeyChecking"] == "yes" and options["GlobalKnownHostsFile"] == "/dev/null"
        if "ProxyCommand" not in options:
            break
        argv = shlex.split(_percent_expand(options["ProxyCommand"], hop["address"], hop["port"]))
        assert argv[-3:-1] == ["-W", f"{hop['address']}:{hop['port']}"]  # the gateway forwards to this very hop
        argv = argv[:-3] + argv[-1:]
    return hops


def test_both_clients_name_the_same_chain_keys_and_known_hosts(chain, tmp_path):
    _, settings, trusted = chain
    paramiko_hops = _paramiko_hops(fabric_connection(settings))
    openssh_hops = _openssh_hops(openssh_argv(settings))
    assert [(h["address"], h["port"], h["user"], h["key"]) for h in paramiko_hops] == [
        ("10.0.0.9", 2209, "rk", f"{tmp_path}/gpu_key"), ("10.0.0.5", 2205, "in", None),
        ("10.0.0.1", 22, "jump", f"{tmp_path}/jump_key")]
    assert [(h["address"], h["port"], h["user"], h["key"]) for h in openssh_hops] == \
        [(h["address"], h["port"], h["user"], h["key"]) for h in paramiko_hops]
    assert [h["timeout_s"] for h in paramiko_hops] == [h["timeout_s"] for h in openssh_hops] == [7.0, 10.0, 10.0]
    assert {h["known_hosts"] for h in paramiko_hops} == {str(tmp_path / "known_hosts")}
    assert {h["known_hosts"] for h in openssh_hops} == {str((tmp_path / "known_hosts").resolve())}
    # the SSH config's file is trusted for the bastion alone, by both clients
    assert [h["trusts"] for h in paramiko_hops] == [False, False, True]
    assert [h["trusts"] for h in openssh_hops] == [[], [], [str(trusted)]]


def test_the_executor_builds_both_from_its_transports_one_settings(chain, tmp_path):
    inventory, settings, _ = chain
    options = ConnectOptions(known_hosts=tmp_path / "known_hosts", ssh_config="none")
    executor = executor_for(inventory.host("gpu"), inventory, Path("runs"), options, say=lambda m: None)
    assert executor.transport.settings == settings
    assert executor.transport.openssh_argv() == openssh_argv(settings)
    moved = dataclasses.replace(settings, target=dataclasses.replace(settings.target, port=2300))
    executor.transport.settings = moved  # one change, seen by both clients
    assert _openssh_hops(executor.transport.openssh_argv())[0]["port"] == 2300
    assert _paramiko_hops(fabric_connection(executor.transport.settings))[0]["port"] == 2300


def test_a_gateway_chain_is_walked_by_the_inventory_alone(chain, tmp_path):
    inventory, _, _ = chain
    inventory.hosts["bastion"] = dataclasses.replace(inventory.host("bastion"), proxy_jump="gpu")
    with pytest.raises(ConfigError, match=r"proxy_jump loop through gpu -> inner -> bastion -> gpu; fix proxy_jump$"):
        SSHSettings.for_host(inventory.host("gpu"), inventory, tmp_path / "known_hosts")


def test_a_gateway_that_is_not_ssh_is_refused_before_any_connection(chain, tmp_path):
    inventory, _, _ = chain
    inventory.hosts["bastion"] = dataclasses.replace(inventory.host("bastion"), connection="winrm")
    with pytest.raises(HostError, match=r"host 'bastion' has ansible_connection=winrm; reprokit runs kits over ssh"):
        SSHSettings.for_host(inventory.host("gpu"), inventory, Path(tmp_path / "known_hosts"))
    assert not (tmp_path / "known_hosts").exists()  # nothing written
