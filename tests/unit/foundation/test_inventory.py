from pathlib import Path

import pytest

from reprokit.config.inventory import LOCAL_HOST
from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory

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


def test_other_variables_pass_through_and_a_misspelt_one_is_warned_about(tmp_path):
    text = GOOD.replace("              ansible_port: 2222\n", "              ansible_port: 2222\n              gpu_cont: 4\n"
                        "              ansible_ssh_common_args: '-o ServerAliveInterval=5'\n"
                        "              ansible_become_user: ops\n              github_runner_enabled: true\n")
    path = inv(tmp_path, text)
    inventory = load_inventory(path)
    assert inventory.host("rtx1").gpu_count == 8  # the group's; gpu_cont is not reprokit's
    assert inventory.warnings == [f"{path}:15: host 'rtx1': variable 'gpu_cont' is not reprokit's (did you mean"
                                  " 'gpu_count'?); it is passed to Ansible as it is"]


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
    with pytest.raises(ConfigError, match=r"host name 'local' is reserved"):
        load_inventory(inv(tmp_path, "all:\n  hosts:\n    local: {}\n"))
    path = inv(tmp_path, "all:\n  hosts:\n    a:\n     b: 1\n   c: [\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    assert str(err.value) == (f"{path}:5: YAML syntax error: expected <block end>, but found '<block mapping start>';"
                              " fix the indentation or quoting there")


def test_shipped_inventory_loads(repo):
    inventory = load_inventory(repo / "inventory.yml")
    host = inventory.host("rtx-pro-6000-01")
    assert (host.gpu_arch, host.gpu_count, host.runtime, host.groups) == ("sm120", 8, "docker", ("blackwell",))


# The same hosts as an INI inventory, and as a directory with group_vars/ and host_vars/: read by the real
# ansible-inventory, so they mean what they mean to ansible-playbook.
INI = """\
[rack1]
rtx1 ansible_host=10.1.0.11 ansible_port=2222
rtx2 ansible_host=10.1.0.12 ansible_user=special runtime=native

[blackwell:children]
rack1

[blackwell:vars]
gpu_arch=sm120
gpu_count=8

[hopper]
h200 ansible_host=10.2.0.1 gpu_arch=sm90 gpu_count=1 ansible_become_user=ops github_runner_enabled=true

[all:vars]
ansible_user=ops
"""


def test_an_ini_inventory(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    inventory = load_inventory(path)
    rtx1, rtx2, h200 = (inventory.host(n) for n in ("rtx1", "rtx2", "h200"))
    assert (rtx1.address, rtx1.port, rtx1.user, rtx1.gpu_arch, rtx1.gpu_count, rtx1.runtime) == (
        "10.1.0.11", 2222, "ops", "sm120", 8, "docker")
    assert rtx1.groups == ("rack1", "blackwell")
    assert (rtx2.user, rtx2.runtime) == ("special", "native")
    assert (h200.gpu_arch, h200.gpu_count, h200.groups) == ("sm90", 1, ("hopper",))
    assert [h.name for h in inventory.group("blackwell")] == ["rtx1", "rtx2"]
    assert inventory.warnings == []


def test_an_ini_error_names_file_and_line(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nrtx1 ansible_host=10.1.0.11 oops\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    assert str(err.value).startswith(f"{path}:2: ansible-inventory: Expected key=value host variable assignment, got: oops;")


def test_a_directory_with_group_vars_and_host_vars(tmp_path):
    (tmp_path / "inv" / "group_vars").mkdir(parents=True)
    (tmp_path / "inv" / "host_vars").mkdir()
    (tmp_path / "inv" / "hosts.yml").write_text(
        "all:\n  children:\n    blackwell:\n      hosts:\n        rtx1:\n          ansible_host: 10.1.0.11\n        rtx2:\n")
    (tmp_path / "inv" / "group_vars" / "all.yml").write_text("ansible_user: ops\n")
    (tmp_path / "inv" / "group_vars" / "blackwell.yml").write_text("gpu_arch: sm120\ngpu_count: 8\n")
    (tmp_path / "inv" / "host_vars" / "rtx2.yml").write_text("ansible_host: 10.1.0.12\ngpu_count: 4\nruntime: native\n")
    inventory = load_inventory(tmp_path / "inv")
    rtx1, rtx2 = inventory.host("rtx1"), inventory.host("rtx2")
    assert (rtx1.address, rtx1.user, rtx1.gpu_arch, rtx1.gpu_count, rtx1.runtime) == ("10.1.0.11", "ops", "sm120", 8, "docker")
    assert (rtx2.address, rtx2.gpu_count, rtx2.runtime) == ("10.1.0.12", 4, "native")
    (tmp_path / "inv" / "host_vars" / "rtx2.yml").write_text("ansible_host: 10.1.0.12\ngpu_count: four\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(tmp_path / "inv")  # the changed file is seen: the cache is keyed by every source's mtime
    assert str(err.value).startswith(f"{tmp_path / 'inv' / 'host_vars' / 'rtx2.yml'}:2: host 'rtx2': field 'gpu_count':"
                                     " Input should be a valid integer")


def test_a_syntax_error_in_group_vars_names_its_file_and_line(tmp_path):
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "gpu.yml").write_text("gpu_arch: sm120\ngpu_count: [\n")
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nrtx1\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    assert str(err.value).startswith(f"{tmp_path / 'group_vars' / 'gpu.yml'}:3: ansible-inventory: YAML syntax error:")


def test_host_ranges_expand_as_in_ansible(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text("[blackwell]\nrtx-[01:03] gpu_arch=sm120 gpu_count=8\n")
    inventory = load_inventory(path)
    assert inventory.groups["blackwell"] == ["rtx-01", "rtx-02", "rtx-03"]
    assert inventory.host("rtx-02").address == "rtx-02" and inventory.host("rtx-03").gpu_count == 8


def test_without_ansible_inventory_the_error_says_to_reinstall(tmp_path, monkeypatch):
    """ansible-core is a dependency: no second reader of a YAML inventory (its merge order was not Ansible's)."""
    from reprokit.config import ansible_inventory

    monkeypatch.setattr(ansible_inventory, "available", lambda: False)
    path = inv(tmp_path, GOOD)
    with pytest.raises(ConfigError) as err:
        load_inventory(path)
    assert str(err.value) == f"{path}: ansible-inventory is not installed; reinstall reprokit (it depends on ansible-core)"


def test_a_host_reprokit_cannot_drive_does_not_break_the_others(tmp_path):
    from reprokit.errors import HostError
    from reprokit.hosts.ssh import connection_for

    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nrtx1 ansible_host=10.1.0.11\n[windows]\nwin1 ansible_connection=winrm ansible_port=5986\n")
    inventory = load_inventory(path)
    assert (inventory.host("rtx1").connection, inventory.host("win1").connection) == ("ssh", "winrm")
    with pytest.raises(HostError, match=r"host 'win1' has ansible_connection=winrm; reprokit runs kits over ssh or on the"
                                        r" local machine only"):
        connection_for(inventory.host("win1"), inventory, known_hosts=tmp_path / "known_hosts")


def test_a_file_without_an_extension_is_read_by_whichever_plugin_takes_it(tmp_path):
    (tmp_path / "hosts").write_text(GOOD)
    (tmp_path / "hosts_ini").write_text(INI)
    assert load_inventory(tmp_path / "hosts").host("rtx2").user == "special"
    assert load_inventory(tmp_path / "hosts_ini").host("h200").gpu_arch == "sm90"


def test_a_misspelling_in_group_vars_is_one_warning_for_all_its_hosts(tmp_path):
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "blackwell.yml").write_text("gpu_arch: sm120\ngpu_cont: 8\n")
    path = tmp_path / "hosts.ini"
    path.write_text("[blackwell]\nrtx-[01:04]\n")
    assert load_inventory(path).warnings == [
        f"{tmp_path / 'group_vars' / 'blackwell.yml'}:2: host 'rtx-01' (and 3 other hosts): variable 'gpu_cont' is not"
        " reprokit's (did you mean 'gpu_count'?); it is passed to Ansible as it is"]


def test_a_variable_reprokit_no_longer_reads_is_ansibles_like_any_other(tmp_path):
    """`cpu_only` (test hosts ran GPU steps without a GPU) is gone: a GPU-less host is planned as one, whatever it says."""
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nrtx1 ansible_host=10.1.0.11 gpu_arch=sm120 cpu_only=true\n")
    inventory = load_inventory(path)
    assert inventory.warnings == []
    assert "cpu_only" not in inventory.host("rtx1").describe()
