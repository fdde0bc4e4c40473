"""`invoke provision`'s Ansible flags, each through the real ansible-playbook against a real SSH test host.

All runs are in check mode (nothing changes on the host, which keeps them quick); what Ansible did is read from its
own output: the tasks it ran (`TASK [role : name]`), its diffs, and its play recap per host.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reprokit.commands.setup import provision_hosts
from reprokit.errors import ConfigError, ExitCode
from tests.integration.docker_env import REASON, start_test_host

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("provision-flags")
    key = tmp / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    host = start_test_host(key.with_suffix(".pub"), prefix="rk-flags")
    # INI, with a second host that does not exist (192.0.2.0/24 is documentation-only): patterns must leave it out.
    (tmp / "hosts.ini").write_text(
        "[testhosts]\n"
        f"testhost ansible_host=127.0.0.1 ansible_port={host.port} ansible_user=admin ansible_ssh_private_key_file={key}\n"
        "ghost ansible_host=192.0.2.1 ansible_user=admin connect_timeout_s=2\n"
        "[testhosts:vars]\nruntime=docker\ndocker_install_source=distro\n")
    (tmp / "known_hosts").write_text(host.known_hosts_line())
    yield tmp, host
    host.remove()


def provision(rig, **flags) -> tuple[int, list[str]]:
    tmp, _ = rig
    said: list[str] = []
    code = provision_hosts(flags.pop("host", None), str(tmp / "hosts.ini"), check=True, known_hosts=str(tmp / "known_hosts"),
                         say=said.append, **flags)
    return code, said


def tasks_run(said: list[str]) -> list[str]:
    return [line.split("[", 1)[1].split("]", 1)[0] for line in said if line.startswith("TASK [")]


def test_tags_diff_and_extra_vars_reach_ansible_playbook(rig):
    code, said = provision(rig, host="testhost", tags=["reprokit"], diff=True, extra_vars=["reprokit_user=alice"])
    assert code == ExitCode.PASS, "\n".join(said[-30:])
    ran = tasks_run(said)
    assert {t.split(" : ")[0] for t in ran if " : " in t} == {"reprokit"}  # role tasks: only the tagged role's
    assert "reprokit : Create the user alice" in ran  # --extra-vars
    assert said.count("+    state: directory") == 4  # --diff: the run, runs, cache and model directories it would create
    assert said[-1].startswith("testhost: provisioned (check mode, nothing was changed):")


def test_skip_tags_and_no_diff(rig):
    _, with_reprokit = provision(rig, host="testhost", tags=["reprokit"])
    code, said = provision(rig, host="testhost", tags=["reprokit", "docker"], skip_tags=["docker"])
    assert code == ExitCode.PASS
    assert tasks_run(said) == tasks_run(with_reprokit)
    assert "+    state: directory" not in said  # no --diff, no diff


def test_limit_is_an_ansible_pattern_and_group_takes_every_member(rig, capsys):
    code, said = provision(rig, limit="testhosts:!ghost", tags=["reprokit"])
    assert code == ExitCode.PASS
    assert [line for line in said if line.startswith(("testhost:", "ghost:"))] == [said[-1]]
    tmp, _ = rig
    code = provision_hosts(None, str(tmp / "hosts.ini"), check=True, known_hosts=str(tmp / "known_hosts"), group="testhosts",
                         tags=["reprokit"], as_json=True)
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {r["host"]: r["exit_code"] for r in runs} == {"testhost": ExitCode.PASS, "ghost": ExitCode.HOST_ERROR}
    assert runs[0]["recap"]["unreachable"] == 0 and code == ExitCode.HOST_ERROR


def test_a_pattern_matching_nothing_and_two_targets_are_refused(rig):
    with pytest.raises(ConfigError, match=r"--limit 'nosuch\*' matches no host of .*hosts.ini; `invoke hosts` lists them"):
        provision(rig, limit="nosuch*")
    with pytest.raises(ConfigError, match=r"give one of --host NAME, --group NAME or --limit PATTERN \(got --host, --group\)"):
        provision(rig, host="testhost", group="testhosts")


def test_dry_prints_the_command_and_runs_nothing(rig):
    tmp, _ = rig
    code, said = provision(rig, host="testhost", tags=["docker"], skip_tags=["gpu_verify"], extra_vars=['{"a": 1}'],
                           dry=True)
    assert code == ExitCode.PASS and len(said) == 1
    assert said[0].startswith("would run: ") and " --limit testhost " in said[0]
    assert said[0].endswith("--extra-vars '{\"a\": 1}' --tags docker --skip-tags gpu_verify --check")
    assert Path(tmp / "known_hosts").read_text().count("\n") == 1
