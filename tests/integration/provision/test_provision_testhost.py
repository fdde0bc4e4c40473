"""Real ansible-playbook (ansible/site.yml, through reprokit.hosts.provision) against real SSH test hosts.

Each host is a container with its own filesystem, systemd and sshd (tests/integration/provision/
testhost.Dockerfile), so provisioning never touches this machine. A GPU-less host is refused before any change;
a host with the GPU doubles (an NVIDIA device on its PCI bus, a working driver's nvidia-smi) is a GPU host to the
roles. Docker comes from the distribution there (Docker's own repository is not reachable in CI), and the roles that
need NVIDIA's repository or a GPU in a container (the toolkit, the GPU check) are left out with --skip-tags.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reprokit.commands.setup import provision_hosts
from reprokit.errors import ConfigError, ExitCode
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.provision import provision
from tests.integration.docker_env import REASON, ContainerHost, start_test_host

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

TEST_VARS = {"docker_install_source": "distro"}
NEED_NVIDIAS_REPOSITORY = ["nvidia_container_toolkit", "gpu_verify"]
# What nvidia-ctk writes into daemon.json on a GPU host; the docker role must keep it (two writers, one file).
NVIDIA_RUNTIME = {"runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}


@pytest.fixture(scope="module")
def ssh_key(tmp_path_factory) -> Path:
    key = tmp_path_factory.mktemp("ssh") / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "reprokit-provision-tests", "-f", str(key)],
                   check=True)
    return key


def write_inventory(path: Path, host: ContainerHost, key: Path) -> Path:
    path.write_text(
        "all:\n  children:\n    testhosts:\n      vars:\n        runtime: docker\n        workdir: /var/lib/reprokit\n"
        f"      hosts:\n        testhost:\n          ansible_host: 127.0.0.1\n          ansible_port: {host.port}\n"
        f"          ansible_user: admin\n          ansible_ssh_private_key_file: {key}\n"
    )
    return path


@pytest.fixture(scope="module")
def fresh_host(ssh_key):
    """A GPU host to the roles: the PCI and nvidia-smi doubles."""
    host = start_test_host(ssh_key.with_suffix(".pub"), gpu=True)
    yield host
    host.remove()


@pytest.fixture(scope="module")
def gpuless_host(ssh_key):
    host = start_test_host(ssh_key.with_suffix(".pub"), prefix="rk-nogpu")
    yield host
    host.remove()


def run(host: ContainerHost, key: Path, tmp: Path, check: bool, **kwargs):
    inventory_path = write_inventory(tmp / "inventory.yml", host, key)
    known_hosts = tmp / "known_hosts"
    if not known_hosts.exists():
        known_hosts.write_text(host.known_hosts_line())
    inventory = load_inventory(inventory_path)
    options = {"extra_vars": TEST_VARS, "skip_tags": NEED_NVIDIAS_REPOSITORY, **kwargs}
    return provision(inventory.host("testhost"), check, inventory=inventory, inventory_path=inventory_path,
                     known_hosts=known_hosts, **options)


def test_converges_then_a_second_run_changes_nothing(fresh_host, ssh_key, tmp_path):
    host = fresh_host
    # Before: no reprokit user, no Docker; daemon.json already holds a key another tool wrote (nvidia-ctk's runtime).
    assert host.sh("id reprokit", check=False).returncode != 0
    assert host.sh("command -v dockerd", check=False).returncode != 0
    host.sh(f"mkdir -p /etc/docker && echo '{json.dumps(NVIDIA_RUNTIME)}' > /etc/docker/daemon.json")

    check = run(host, ssh_key, tmp_path, check=True)
    assert check.succeeded, check.output[-3000:]
    assert check.changed > 0
    assert host.sh("id reprokit", check=False).returncode != 0, "check mode created the user"
    assert host.sh("command -v dockerd", check=False).returncode != 0, "check mode installed Docker"

    first = run(host, ssh_key, tmp_path, check=False)
    assert first.succeeded, first.output[-3000:]
    assert first.changed > 0
    assert ("driver 580.95.05 works (nvidia-smi answers) and is on branch 570 or newer; this role leaves it as it is"
            in " ".join(first.output.split()))

    # The host as provisioned: the kit's user with the images' uid, in the docker group; its directories; a running
    # Docker managed by systemd; daemon.json with our log settings and the runtime written before kept.
    assert host.sh("id -u reprokit").stdout.strip() == "10001"
    assert "docker" in host.sh("id -nG reprokit").stdout.split()
    for directory in ("/var/lib/reprokit", "/var/lib/reprokit/runs", "/var/lib/reprokit/cache", "/models"):
        assert host.sh(f"stat -c '%U %a' {directory}").stdout.strip() == "reprokit 755", directory
    assert host.sh("systemctl is-active docker").stdout.strip() == "active"
    assert host.sh("docker info --format '{{.ServerVersion}}'").returncode == 0
    daemon = json.loads(host.sh("cat /etc/docker/daemon.json").stdout)
    assert daemon == {**NVIDIA_RUNTIME, "log-driver": "json-file", "log-opts": {"max-size": "100m", "max-file": "3"}}

    second = run(host, ssh_key, tmp_path, check=False)
    assert second.succeeded, second.output[-3000:]
    assert second.recap["changed"] == 0, [line for line in second.output.splitlines() if line.startswith("changed")]

    again_check = run(host, ssh_key, tmp_path, check=True)
    assert again_check.succeeded and again_check.recap["changed"] == 0


def test_gpu_roles_refuse_a_host_without_a_gpu(gpuless_host, ssh_key, tmp_path):
    result = run(gpuless_host, ssh_key, tmp_path, check=True)
    assert not result.succeeded
    assert result.recap["failed"] == 1 and result.recap["changed"] == 0
    [message] = result.failure_messages()
    assert message.startswith("testhost has no NVIDIA GPU: no PCI device with vendor 0x10de")
    assert message.endswith("(`invoke provision --host testhost --tags docker --tags reprokit`).")


def test_an_unknown_host_key_is_refused_and_accept_new_saves_it(fresh_host, ssh_key, tmp_path):
    (tmp_path / "known_hosts").write_text("")
    refused = run(fresh_host, ssh_key, tmp_path, check=True)
    assert refused.recap["unreachable"] == 1
    assert "Host key verification failed" in refused.output

    accepted = run(fresh_host, ssh_key, tmp_path, check=True, accept_new_host_key=True)
    assert accepted.succeeded, accepted.output[-2000:]
    assert (tmp_path / "known_hosts").read_text().split()[1:3] == fresh_host.host_key.split()


def test_cli_exit_codes(gpuless_host, ssh_key, tmp_path):
    inventory_path = write_inventory(tmp_path / "inventory.yml", gpuless_host, ssh_key)
    (tmp_path / "known_hosts").write_text(gpuless_host.known_hosts_line())
    said: list[str] = []
    code = provision_hosts("testhost", str(inventory_path), check=True, known_hosts=str(tmp_path / "known_hosts"),
                         say=said.append)
    assert code == ExitCode.FAIL
    assert said[-1].startswith("testhost: testhost has no NVIDIA GPU")

    (tmp_path / "known_hosts").write_text("")
    assert provision_hosts("testhost", str(inventory_path), check=True, known_hosts=str(tmp_path / "known_hosts"),
                         say=said.append) == ExitCode.HOST_ERROR

    with pytest.raises(ConfigError, match="built-in host 'local' is not provisioned"):
        provision_hosts("local", str(inventory_path), check=True, say=said.append)
