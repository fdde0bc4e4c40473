from pathlib import Path

import pytest

from reprokit.config.inventory import LOCAL_HOST, load_inventory
from reprokit.errors import ConfigError

GOOD = """\
all:
  vars:
    ansible_user: ops
  children:
    blackwell:
      vars:
        gpu_arch: sm120
        gpu_count: 8
      children:
        rack1:
          hosts:
            rtx1:
              ansible_host: 10.1.0.11
              ansible_port: 2222
            rtx2:
              ansible_host: 10.1.0.12
              ansible_user: special
              runtime: native
    hopper:
      hosts:
        h200:
          ansible_host: 10.2.0.1
          gpu_arch: sm90
          gpu_count: 1
"""


def inv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "inventory.yml"
    path.write_text(text)
    return path


def test_hosts_merge_vars_like_ansible(tmp_path):
    inventory = load_inventory(inv(tmp_path, GOOD))
    rtx1 = inventory.host("rtx1")
    assert (rtx1.address, rtx1.port, rtx1.user, rtx1.gpu_arch, rtx1.gpu_count, rtx1.runtime) == (
        "10.1.0.11", 2222, "ops", "sm120", 8, "docker")
    assert rtx1.groups == ("rack1", "blackwell")
    rtx2 = inventory.host("rtx2")
    assert (rtx2.user, rtx2.runtime, rtx2.port) == ("special", "native", 22)
    assert inventory.host("h200").gpu_arch == "sm90"
    assert [h.name for h in inventory.group("blackwell")] == ["rtx1", "rtx2"]
    assert inventory.groups["all"] == ["local", "rtx1", "rtx2", "h200"]
    assert rtx1.source == f"{tmp_path / 'inventory.yml'}:12"


def test_local_is_built_in_and_default(tmp_path):
    inventory = load_inventory(inv(tmp_path, GOOD))
    local = inventory.host(None)
    assert local.name == LOCAL_HOST and local.is_local and local.runtime == "native"
    assert load_inventory(tmp_path / "absent.yml").host(None).name == LOCAL_HOST


def test_unknown_host_lists_known_ones(tmp_path):
    path = inv(tmp_path, GOOD)
    with pytest.raises(ConfigError) as err:
        load_inventory(path).host("rtx3")
    assert str(err.value) == f"{path}: unknown host 'rtx3' (did you mean 'rtx2'?); known hosts: h200, local, rtx1, rtx2"


def test_unknown_group(tmp_path):
    path = inv(tmp_path, GOOD)
    with pytest.raises(ConfigError, match=r"unknown group 'ampere'; known groups: all, blackwell, hopper, rack1"):
        load_inventory(path).group("ampere")


def test_unknown_host_var_names_line_and_known_keys(tmp_path):
    path = inv(tmp_path, GOOD.replace("              ansible_port: 2222\n", "              ansible_prot: 2222\n"))
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    message = str(err.value)
    assert message.startswith(f"{path}:14: host 'rtx1': unknown key 'ansible_prot'; known keys here: ansible_host, ansible_port,")
    assert "gpu_arch" in message


def test_wrong_type_names_the_group_var_line(tmp_path):
    path = inv(tmp_path, GOOD.replace("gpu_count: 8", "gpu_count: eight"))
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    assert str(err.value).startswith(f"{path}:8: host 'rtx1': field 'gpu_count': Input should be a valid integer")
    assert "(got 'eight')" in str(err.value)


def test_bad_arch_and_port(tmp_path):
    path = inv(tmp_path, GOOD.replace("gpu_arch: sm90", "gpu_arch: hopper"))
    with pytest.raises(ConfigError, match=r"inventory.yml:23: host 'h200': field 'gpu_arch': unknown gpu_arch 'hopper'"):
        load_inventory(path)
    path = inv(tmp_path, GOOD.replace("2222", "70000"))
    with pytest.raises(ConfigError, match=r"inventory.yml:14: host 'rtx1': field 'ansible_port': Input should be less than or equal to 65535"):
        load_inventory(path)


def test_structure_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"inventory.yml:1: unknown top-level key 'hosts'; an Ansible YAML inventory starts with 'all:'"):
        load_inventory(inv(tmp_path, "hosts:\n  a: {}\n"))
    with pytest.raises(ConfigError, match=r"inventory.yml:4: unknown key 'host' in group 'g'; known keys here: hosts, vars, children"):
        load_inventory(inv(tmp_path, "all:\n  children:\n    g:\n      host:\n        a: {}\n"))
    with pytest.raises(ConfigError, match=r"host name 'local' is reserved"):
        load_inventory(inv(tmp_path, "all:\n  hosts:\n    local: {}\n"))
    with pytest.raises(ConfigError, match=r"inventory.yml:5: duplicate key 'all.hosts.a'"):
        load_inventory(inv(tmp_path, "all:\n  hosts:\n    a:\n      ansible_host: x\n    a: {}\n"))


def test_shipped_inventory_loads(repo):
    inventory = load_inventory(repo / "inventory.yml")
    host = inventory.host("rtx-pro-6000-01")
    assert (host.gpu_arch, host.gpu_count, host.runtime, host.groups) == ("sm120", 8, "docker", ("blackwell",))
