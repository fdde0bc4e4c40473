"""An SSH host's connection runs the commands of an image build: binary stdin, streamed output, exit codes, timeouts."""

import io
import tarfile

import pytest

from reprokit.errors import HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, connection_for
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_docker import BASE
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON


def runner_for(tmp_path, name="h3"):
    inventory = load_inventory(write_inventory(tmp_path / "inv.yml", {name: {"workdir": host_workdir(name, "cmd")}}))
    known = known_hosts_for(tmp_path / "known_hosts", name)
    return connection_for(inventory.host(name), inventory, ConnectOptions(known_hosts=known), say=lambda m: None)


def test_binary_stdin_env_streaming_and_exit_codes(tmp_path):
    connection = runner_for(tmp_path)
    run = connection.stream
    payload = bytes(range(256)) * 4096  # 1 MiB, every byte value
    result = run(["sh", "-c", "sha256sum | cut -c1-16; echo \"$GREETING\"; exit 3"], stdin=payload, env={"GREETING": "hi"})
    import hashlib
    assert result.returncode == 3
    assert result.output.splitlines() == [hashlib.sha256(payload).hexdigest()[:16], "hi"]
    lines = []
    assert run(["sh", "-c", "echo one; echo two >&2"], on_line=lines.append).returncode == 0
    assert lines == ["one", "two"]
    with pytest.raises(HostError) as slow:
        run(["sleep", "30"], timeout_s=1)
    assert str(slow.value) == "host 'h3': `sleep 30` did not finish within 1 s"
    connection.close()


def test_docker_build_over_ssh_from_a_context_on_stdin(tmp_path):
    if DOCKER_REASON:
        pytest.skip(DOCKER_REASON)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = f"FROM {BASE}\nRUN echo built-over-ssh > /built\n".encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    connection = runner_for(tmp_path, "h4")
    run = connection.stream
    result = run(["docker", "build", "-q", "-t", "reprokit-test/over-ssh:1", "-"], stdin=buf.getvalue(), timeout_s=300)
    assert result.returncode == 0, result.output
    assert result.output.strip().splitlines()[-1].startswith("sha256:")
    check = run(["docker", "run", "--rm", "reprokit-test/over-ssh:1", "cat", "/built"])
    assert check.output.strip() == "built-over-ssh"
    connection.close()
