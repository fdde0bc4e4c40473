"""How the operator's SSH config is applied to inventory hosts (no connection: tests/integration/sshconfig/ connects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.ssh_config import resolve

CONFIG = """\
Host gpu
  HostName 10.1.0.11
  User ops
  Port 2222
  IdentityFile ~/.ssh/gpu_key
  UserKnownHostsFile ~/.ssh/known_hosts /etc/ssh/team_known_hosts
  ProxyJump admin@bastion:2200,inner

Host bastion
  HostName 192.0.2.1
  IdentityFile ~/.ssh/bastion_key

Host inner
  HostName 10.0.0.1

Host legacy
  ProxyCommand nc -X connect -x proxy:3128 %h %p

Host *
  User fallback
"""


def setup(tmp_path, host_vars: str):
    (tmp_path / "ssh_config").write_text(CONFIG)
    (tmp_path / "inventory.yml").write_text(f"all:\n  hosts:\n    target:\n{host_vars}")
    return load_inventory(tmp_path / "inventory.yml"), str(tmp_path / "ssh_config")


def test_an_alias_with_a_jump_chain(tmp_path):
    inventory, config = setup(tmp_path, "      ansible_host: gpu\n")
    host, extended = resolve(inventory.host("target"), inventory, config)
    assert (host.address, host.user, host.port, host.key_file) == ("10.1.0.11", "ops", 2222, str(Path.home() / ".ssh/gpu_key"))
    assert host.known_hosts_files == (str(Path.home() / ".ssh/known_hosts"), "/etc/ssh/team_known_hosts")
    inner = extended.host(host.proxy_jump)
    assert (inner.name, inner.address, inner.user, inner.port) == ("inner (ssh config)", "10.0.0.1", "fallback", 22)
    first = extended.host(inner.proxy_jump)
    assert (first.address, first.user, first.port, first.key_file, first.proxy_jump) == (
        "192.0.2.1", "admin", 2200, str(Path.home() / ".ssh/bastion_key"), None)
    assert inventory.hosts.keys() == {"local", "target"}  # the inventory itself is not changed


def test_the_inventory_wins_where_it_sets_a_value(tmp_path):
    inventory, config = setup(tmp_path, "      ansible_host: gpu\n      ansible_user: me\n      ansible_port: 2022\n")
    host, _ = resolve(inventory.host("target"), inventory, config)
    assert (host.address, host.user, host.port) == ("10.1.0.11", "me", 2022)


def test_no_file_and_none_change_nothing(tmp_path):
    inventory, _ = setup(tmp_path, "      ansible_host: gpu\n")
    assert resolve(inventory.host("target"), inventory, "none")[0] == inventory.host("target")
    with pytest.raises(ConfigError, match="ssh_config_absent: SSH config file not found"):
        resolve(inventory.host("target"), inventory, str(tmp_path / "ssh_config_absent"))


def test_proxy_command_is_refused_in_one_line(tmp_path):
    inventory, config = setup(tmp_path, "      ansible_host: legacy\n")
    with pytest.raises(ConfigError, match=r"ssh_config: 'ProxyCommand' of 'legacy' is not supported .*write the gateway as"
                                          r" 'ProxyJump'"):
        resolve(inventory.host("target"), inventory, config)
