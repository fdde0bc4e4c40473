"""The operator's OpenSSH config, against the real sshd test hosts (tests/services/up.d/10-sshhosts.sh).

The inventory names hosts only by an alias of an SSH config file: the address, user, key and the jump host
(ProxyJump, to 10.214.0.10, reachable only through the gateway) exist in that file alone. Both connection paths
(Paramiko for commands, the OpenSSH client for bulk copies) must reach the host through it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reprokit.errors import HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import run_invoke
from tests.doubles.libcuda import gpu_python
from tests.integration.remote.conftest import ADDRESSES, REASON, STATE, host_workdir, known_hosts_for

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _setup(tmp_path, known: tuple[str, ...] = ("h1", "gw", "priv")):
    key = STATE / "id_ed25519"
    (tmp_path / "ssh_config").write_text(
        f"Host gpu-alias\n  HostName {ADDRESSES['h1']}\n  User rkuser\n  IdentityFile {key}\n\n"
        f"Host bastion\n  HostName {ADDRESSES['gw']}\n  User rkuser\n  IdentityFile {key}\n\n"
        f"Host private-gpu\n  HostName {ADDRESSES['priv']}\n  User rkuser\n  IdentityFile {key}\n  ProxyJump bastion\n"
        "  StrictHostKeyChecking no\n")
    (tmp_path / "inventory.yml").write_text(
        f"all:\n  vars:\n    runtime: native\n    ansible_python_interpreter: {gpu_python()}\n  hosts:\n"
        "    aliased:\n      ansible_host: gpu-alias\n    behind:\n      ansible_host: private-gpu\n")
    known_hosts = known_hosts_for(tmp_path / "known_hosts", *known)
    return load_inventory(tmp_path / "inventory.yml"), ConnectOptions(known_hosts=known_hosts,
                                                                      ssh_config=str(tmp_path / "ssh_config"))


def _server_address(executor) -> str:
    _, out, _ = executor.transport.sh("echo $SSH_CONNECTION")
    return out.split()[2]


@pytest.mark.parametrize(("host", "address"), [("aliased", ADDRESSES["h1"]), ("behind", ADDRESSES["priv"])])
def test_an_alias_and_a_jump_defined_only_in_the_ssh_config(tmp_path, host, address):
    inventory, options = _setup(tmp_path)
    executor = executor_for(inventory.host(host), inventory, Path("runs"), options, say=lambda m: None)
    executor.connect()
    try:
        assert _server_address(executor) == address  # Paramiko
        argv = executor.transport.openssh_argv()  # the OpenSSH client of the bulk copy, from the same settings
        proc = subprocess.run([*argv, "echo $SSH_CONNECTION"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split()[2] == address
    finally:
        executor.close_connection()


def test_strict_host_key_checking_stays_on_whatever_the_config_says(tmp_path):
    inventory, options = _setup(tmp_path, known=("gw",))  # the config says `StrictHostKeyChecking no` for the target
    executor = executor_for(inventory.host("behind"), inventory, Path("runs"), options, say=lambda m: None)
    with pytest.raises(HostError) as err:
        executor.connect()
    assert f"({ADDRESSES['priv']}:22): its host key is not in {options.known_hosts}" in str(err.value)


def test_without_the_config_the_alias_is_not_a_host(tmp_path):
    inventory, options = _setup(tmp_path)
    options.ssh_config = "none"
    executor = executor_for(inventory.host("aliased"), inventory, Path("runs"), options, say=lambda m: None)
    with pytest.raises(HostError, match="host 'aliased' \\(gpu-alias:22\\): cannot connect"):
        executor.connect()


def test_user_known_hosts_file_of_the_config_is_trusted_and_never_written(tmp_path):
    inventory, options = _setup(tmp_path, known=())
    theirs = known_hosts_for(tmp_path / "their_known_hosts", "h1")
    config = tmp_path / "ssh_config"
    config.write_text(config.read_text().replace("Host bastion", f"  UserKnownHostsFile {theirs}\n\nHost bastion", 1))
    before = theirs.read_bytes()
    executor = executor_for(inventory.host("aliased"), inventory, Path("runs"), options, say=lambda m: None)
    executor.connect()
    try:
        assert _server_address(executor) == ADDRESSES["h1"]
        proc = subprocess.run([*executor.transport.openssh_argv(), "true"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    finally:
        executor.close_connection()
    assert theirs.read_bytes() == before and options.known_hosts.read_text() == ""


def test_a_kit_run_with_the_real_cli_through_the_jump_of_the_config(tmp_path):
    inventory, options = _setup(tmp_path)
    work = host_workdir("priv", "sshconfig")
    (tmp_path / "inventory.yml").write_text((tmp_path / "inventory.yml").read_text() + f"      workdir: {work}\n")
    proc = run_invoke("probe", "-H", "behind", "-i", str(tmp_path / "inventory.yml"), "--ssh-config",
                      str(tmp_path / "ssh_config"), "--known-hosts", str(options.known_hosts), "-r", str(tmp_path / "runs"),
                      "--json", "--quiet", timeout=300)
    assert proc.returncode == 3, proc.stderr  # INCONCLUSIVE: the test host's GPU is the libcuda double's, it has no torch
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete" and verify_record(run_dir) == []
    assert {s["name"]: s["status"] for s in manifest["steps"]} == {"probe": "ok"}
    assert list((work / "runs").iterdir()) == []  # the host's copy went once verified
