"""The roles' house style: every variable in defaults/main.yml is documented in the role's README and has a
comment above it; role variables carry the role's name; handlers are notified by their exact names."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import REPO

ROLES = sorted(p for p in (REPO / "ansible/roles").iterdir() if p.is_dir())


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_every_default_is_documented(role):
    defaults = yaml.safe_load((role / "defaults/main.yml").read_text())
    readme = (role / "README.md").read_text()
    assert readme.startswith(f"# {role.name}\n")
    for name in defaults:
        assert name.startswith(role.name + "_"), f"{role.name}: {name} does not carry the role's name"
        assert f"`{name}`" in readme, f"{role.name}/README.md does not document {name}"
    # Variables come in blocks separated by blank lines, each block opened by the comment that explains it.
    text = (role / "defaults/main.yml").read_text().removeprefix("---\n")
    for block in re.split(r"\n\s*\n", text):
        lines = block.strip("\n").splitlines()
        names = [line.split(":")[0] for line in lines if re.match(r"^[a-z_]+:", line)]
        if names:
            assert lines[0].startswith("#"), f"{role.name}: {', '.join(names)} have no comment above them"


def test_handlers_are_notified_by_their_names():
    handlers = {}
    for role in ROLES:
        path = role / "handlers/main.yml"
        if path.exists():
            handlers[role.name] = [h["name"] for h in yaml.safe_load(path.read_text())]
    notified = {}
    for role in ROLES:
        for path in (role / "tasks").glob("*.yml"):
            for match in re.finditer(r"notify: (.+)", path.read_text()):
                notified.setdefault(role.name, set()).add(match.group(1).strip())
    for role, names in notified.items():
        assert names <= set(handlers.get(role, [])), (role, names)
    assert set(notified) == {"docker", "nvidia_container_toolkit", "nvidia_driver"}


def test_gpu_roles_depend_on_the_preflight():
    for name in ("nvidia_driver", "nvidia_container_toolkit", "gpu_verify"):
        meta = yaml.safe_load((REPO / "ansible/roles" / name / "meta/main.yml").read_text())
        assert meta["dependencies"] == [{"role": "gpu_preflight"}], name
        tasks = yaml.safe_load((REPO / "ansible/roles" / name / "tasks/main.yml").read_text())
        assert [sorted(task) for task in tasks] == [["ansible.builtin.include_tasks", "name"]], name  # no way around it


def test_the_runner_labels_are_the_workflows():
    defaults = yaml.safe_load((REPO / "ansible/roles/github_runner/defaults/main.yml").read_text())
    assert defaults["github_runner_labels"] == ["self-hosted", "linux", "x64", "gpu", "{{ gpu_arch | default('sm120') }}"]
