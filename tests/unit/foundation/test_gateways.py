"""One walker of a gateway chain (Inventory.gateways): its order, and a loop as bad input."""

from __future__ import annotations

import pytest

from reprokit.errors import ConfigError, ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.provision import ansible_command
from reprokit.run.dry_run import _route

INVENTORY = """all:
  hosts:
    gpu:
      ansible_host: 10.0.0.9
      proxy_jump: inner
    inner:
      ansible_host: 10.0.0.5
      ansible_port: 2205
      proxy_jump: bastion
    bastion:
      ansible_host: 10.0.0.1
      ansible_user: jump
    loop-a:
      ansible_host: 10.0.1.1
      proxy_jump: loop-b
    loop-b:
      ansible_host: 10.0.1.2
      proxy_jump: loop-a
"""


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text(INVENTORY, encoding="utf-8")
    return load_inventory(path)


def test_the_nearest_gateway_comes_first(inventory):
    assert [h.name for h in inventory.gateways(inventory.host("gpu"))] == ["inner", "bastion"]
    assert inventory.gateways(inventory.host("bastion")) == ()


def test_a_loop_is_bad_input_for_every_walker(inventory, tmp_path):
    for walk in (lambda: inventory.gateways(inventory.host("loop-a")),
                 lambda: ansible_command(inventory.host("loop-a"), inventory, tmp_path / "inventory.yml", check=True)):
        with pytest.raises(ConfigError) as loop:
            walk()
        assert loop.value.exit_code == ExitCode.BAD_INPUT
        assert str(loop.value) == f"{tmp_path / 'inventory.yml'}:13: proxy_jump loop through loop-a -> loop-b -> loop-a;" \
                                  " fix proxy_jump"


def test_the_dry_plan_and_ansible_go_through_the_same_hops(inventory, tmp_path):
    from reprokit.hosts.factory import ConnectOptions

    assert _route(inventory.host("gpu"), inventory, ConnectOptions(ssh_config="none")) == \
        "gpu (10.0.0.9:22 via 10.0.0.5:2205, jump@10.0.0.1:22)"
    argv = ansible_command(inventory.host("gpu"), inventory, tmp_path / "inventory.yml", check=True)
    common = argv[argv.index("--ssh-common-args") + 1]
    assert common.count("-W %h:%p") == 1 and common.count("-W %%h:%%p") == 1  # the nested one for its own client
    assert common.index("2205") < common.index("jump@10.0.0.1")
