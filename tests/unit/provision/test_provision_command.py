"""The ansible-playbook command `invoke provision` runs (inventory, limit, known_hosts, gateways, check mode),
and how its play recap is read."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.provision import PLAYBOOK, ProvisionResult, ansible_command, parse_recap, provision

INVENTORY = """\
all:
  vars:
    ansible_user: ops
  hosts:
    gw:
      ansible_host: 192.0.2.1
      ansible_port: 2222
      ansible_ssh_private_key_file: ~/.ssh/gw_key
    gpu1:
      ansible_host: 10.0.0.5
      proxy_jump: gw
"""


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text(INVENTORY)
    return path, load_inventory(path)


def test_the_command_for_a_host_behind_a_gateway(inventory, tmp_path):
    path, inv = inventory
    known = tmp_path / "kh"
    argv = ansible_command(inv.host("gpu1"), inv, path, check=True, diff=True, known_hosts=known, user="root",
                           extra_vars={"docker_install_source": "distro"})
    assert argv[:6] == ["ansible-playbook", "-i", str(path), "--limit", "gpu1", str(PLAYBOOK)]
    assert argv[argv.index("--user") + 1] == "root"
    assert json.loads(argv[argv.index("--extra-vars") + 1]) == {"docker_install_source": "distro"}
    assert argv[-2:] == ["--check", "--diff"]
    ssh = shlex.split(argv[argv.index("--ssh-common-args") + 1])
    assert ssh[:6] == ["-o", f"UserKnownHostsFile={known.resolve()}", "-o", "StrictHostKeyChecking=yes",
                       "-o", "ConnectTimeout=10"]
    proxy = shlex.split(ssh[ssh.index("-o", 6) + 1].removeprefix("ProxyCommand="))
    assert proxy == ["ssh", "-o", f"UserKnownHostsFile={known.resolve()}", "-o", "StrictHostKeyChecking=yes",
                     "-o", "ConnectTimeout=10", "-p", "2222", "-W", "%h:%p",
                     "-i", str(Path("~/.ssh/gw_key").expanduser()), "-o", "IdentitiesOnly=yes", "ops@192.0.2.1"]


def test_accept_new_and_a_real_run_without_check(inventory, tmp_path):
    path, inv = inventory
    argv = ansible_command(inv.host("gw"), inv, path, check=False, known_hosts=tmp_path / "kh", accept_new_host_key=True)
    assert "--check" not in argv
    assert "StrictHostKeyChecking=accept-new" in argv[argv.index("--ssh-common-args") + 1]


def test_the_local_host_is_not_provisioned_from_here(inventory):
    path, inv = inventory
    with pytest.raises(ConfigError, match="add this machine to inventory.yml under its own name with `ansible_connection: local`"):
        provision(inv.host("local"), True, inventory=inv, inventory_path=path)


def test_the_recap_is_read_per_host():
    out = ("PLAY RECAP *****\n"
           "gpu1                       : ok=21   changed=6    unreachable=0    failed=0    skipped=20   rescued=0    ignored=2\n"
           "gpu2                       : ok=3    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0\n")
    assert parse_recap(out, "gpu1") == {"ok": 21, "changed": 6, "unreachable": 0, "failed": 0, "skipped": 20,
                                        "rescued": 0, "ignored": 2}
    assert parse_recap(out, "gpu2")["unreachable"] == 1
    assert parse_recap(out, "gpu3") == {}


def test_failure_messages_skip_ignored_errors():
    out = ("fatal: [gpu1]: FAILED! => \n    changed: false\n    msg: 'Could not find the requested service docker: host'\n"
           "...ignoring\n\nTASK [gpu_preflight : Refuse a host without an NVIDIA GPU] ***\n"
           "fatal: [gpu1]: FAILED! => \n    changed: false\n    msg: gpu1 has no NVIDIA GPU: no PCI device\n"
           "        under /sys/bus/pci/devices\n\nPLAY RECAP ***\n")
    result = ProvisionResult("gpu1", True, 2, {"failed": 1}, out)
    assert result.failure_messages() == ["gpu1 has no NVIDIA GPU: no PCI device under /sys/bus/pci/devices"]
    assert not result.succeeded


def test_an_ssh_config_reaches_every_hop(inventory, tmp_path):
    path, inv = inventory
    argv = ansible_command(inv.host("gpu1"), inv, path, check=False, known_hosts=tmp_path / "kh", ssh_config="~/team_ssh_config",
                           tags=["docker", "reprokit"], skip_tags=["gpu_verify"], extra_args=["a=1", "@vars.yml"])
    ssh = shlex.split(argv[argv.index("--ssh-common-args") + 1])
    config = str(Path("~/team_ssh_config").expanduser())
    assert ssh[:2] == ["-F", config]
    assert shlex.split(ssh[-1].removeprefix("ProxyCommand="))[1:3] == ["-F", config]
    assert argv[argv.index("--tags") + 1] == "docker,reprokit" and argv[argv.index("--skip-tags") + 1] == "gpu_verify"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--extra-vars"] == ["a=1", "@vars.yml"]
    assert "--check" not in argv and "--diff" not in argv
    none = ansible_command(inv.host("gw"), inv, path, check=False, known_hosts=tmp_path / "kh", ssh_config="none")
    assert shlex.split(none[none.index("--ssh-common-args") + 1])[:2] == ["-F", "/dev/null"]


def test_dry_provision_of_a_group_is_one_playbook_run_per_gateway(tmp_path):
    """`invoke --dry provision --group`: hosts behind different gateways need different SSH arguments, so one run each."""
    from reprokit.commands.setup import provision_hosts
    from reprokit.errors import ExitCode

    path = tmp_path / "inventory.yml"
    path.write_text(INVENTORY + "    gpu2:\n      ansible_host: 10.0.0.6\n      proxy_jump: gw\n"
                    "    gpu3:\n      ansible_host: 10.0.0.7\n  children:\n    gpus:\n      hosts:\n"
                    "        gpu1:\n        gpu2:\n        gpu3:\n")
    said: list[str] = []
    code = provision_hosts(None, str(path), check=True, known_hosts=str(tmp_path / "kh"), say=said.append,
                           group="gpus", dry=True)
    assert code == ExitCode.PASS
    limits = [shlex.split(line.removeprefix("would run: "))[4] for line in said]
    assert [line.startswith("would run: ansible-playbook -i ") for line in said] == [True, True]
    assert limits == ["gpu1,gpu2", "gpu3"]
    assert ["ProxyCommand=" in line for line in said] == [True, False]
