"""ansible-lint with the production profile over the playbook and every role; the playbook's syntax."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

ANSIBLE = REPO / "ansible"
# This venv's (requirements-dev.lock), never the system's: the versions CI proves are the ones the locks pin.
LINT = str(Path(sys.executable).parent / "ansible-lint")
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
ROLES = sorted(p.name for p in (ANSIBLE / "roles").iterdir() if p.is_dir())


def lint(cwd: Path, *paths: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", ANSIBLE_CONFIG=str(cwd / "ansible.cfg"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return subprocess.run([LINT, "--offline", "--nocolor", "--profile", "production", "--format=pep8", *paths], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)


def test_the_roles_are_the_ones_the_playbook_names():
    assert ROLES == ["docker", "github_runner", "gpu_preflight", "gpu_verify", "nvidia_container_toolkit",
                     "nvidia_driver", "reprokit"]


def test_production_profile_passes():
    result = lint(ANSIBLE, "site.yml", *[f"roles/{r}" for r in ROLES])
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    match = re.search(r"Passed: 0 failure\(s\), 0 warning\(s\) in (\d+) files processed of \d+ encountered\. Profile"
                      r" 'production' was required, and it passed\.", out)
    assert match, out
    assert int(match.group(1)) >= 40  # the playbook, every role's tasks, defaults, handlers and meta


def test_lint_would_catch_a_short_module_name(tmp_path):
    """The lint run is real: the same roles with one module written without its collection fail it."""
    copy = tmp_path / "ansible"
    shutil.copytree(ANSIBLE, copy)
    tasks = copy / "roles" / "reprokit" / "tasks" / "main.yml"
    tasks.write_text(tasks.read_text().replace("ansible.builtin.getent:", "getent:", 1))
    result = lint(copy, "site.yml", *[f"roles/{r}" for r in ROLES])
    assert result.returncode != 0
    assert "fqcn" in result.stdout + result.stderr


def test_playbook_syntax():
    result = subprocess.run([PLAYBOOK, "--syntax-check", "-i", "localhost,", "site.yml"], cwd=ANSIBLE,
                            capture_output=True, text=True, env=dict(os.environ, ANSIBLE_CONFIG=str(ANSIBLE / "ansible.cfg")))
    assert result.returncode == 0, result.stdout + result.stderr
