"""The shell that runs on hosts is in files: shellcheck-clean as written and as filled in, shipped in the wheel."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tomllib
from fnmatch import fnmatch

import pytest

from reprokit.hosts import shell
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.launchers.session import CONFINE_SH, reap_command, wrapper_script
from reprokit.hosts.launchers.slurm import job_script
from reprokit.hosts.runtimes import StepPlace
from reprokit.hosts.runtimes.docker import DockerRuntime
from reprokit.hosts.shell_scripts import SCRIPTS_DIR, render
from tests.conftest import REPO

SHELLCHECK = shutil.which("shellcheck")
needs_shellcheck = pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (apt-get install shellcheck)")
COMMAND = "env PYTHONPATH=/srv/rk/code/ab python3 -m reprokit.workloads.smem_probe --params params.json --out-dir ."


def shellcheck(text: str) -> str:
    done = subprocess.run([SHELLCHECK, "-s", "sh", "-"], input=text, capture_output=True, text=True)
    return done.stdout


@needs_shellcheck
@pytest.mark.parametrize("path", sorted(SCRIPTS_DIR.glob("*.sh")), ids=lambda p: p.name)
def test_every_template_is_shellcheck_clean_as_written(path):
    assert shellcheck(path.read_text(encoding="utf-8")) == ""


def docker_command_with_secrets(tmp_path) -> str:
    (tmp_path / "inventory.yml").write_text("all:\n  hosts:\n    gpu:\n      ansible_host: 10.0.0.9\n"
                                            "      workdir: /srv/rk work\n      runtime: docker\n", encoding="utf-8")
    place = StepPlace(run_id="R1", step_name="probe", remote_dir="/srv/rk work/runs/R1/probe",
                      code_dir="/srv/rk work/code/ab", models_present=True, with_secrets=True)
    runtime = DockerRuntime(load_inventory(tmp_path / "inventory.yml").host("gpu"), {"sglang": "registry:5000/sglang:1"})
    return runtime.command("reprokit.workloads.probe", "sglang", place)


@needs_shellcheck
def test_the_scripts_hosts_run_are_shellcheck_clean_as_filled_in(tmp_path):
    scripts = {"run.sh": wrapper_script(COMMAND, 180, "docker rm -f R1-probe >/dev/null 2>&1"),
               "run.sh without cleanup": wrapper_script(COMMAND, 60),
               "run.sh of a docker step with secrets": wrapper_script(docker_command_with_secrets(tmp_path), 60),
               "job.sh": job_script("/scratch/rk work/runs/R1/probe", COMMAND),
               "job.sh of a docker step with secrets": job_script("/scratch/rk/runs/R1/probe",
                                                                  docker_command_with_secrets(tmp_path)),
               "reap": "#!/bin/sh\n" + reap_command("/srv/rk/runs/R1", "R1"),
               "ship_code.sh": render("ship_code.sh", STAGED=shell.quote("/srv/rk work/code/.ab.R1"),
                                      ARCHIVE=shell.quote("/srv/rk work/code/.ab.R1.tar.gz"),
                                      CODE_DIR=shell.quote("/srv/rk work/code/ab"))}
    assert {name: shellcheck(text) for name, text in scripts.items()} == {name: "" for name in scripts}


def test_the_wrapper_and_the_job_script_share_their_secrets_and_exit_code_parts():
    wrapper, job = wrapper_script(COMMAND, 60), job_script("/scratch/rk/runs/R1/probe", COMMAND)
    parts = (SCRIPTS_DIR / "step_parts.sh").read_text(encoding="utf-8").removeprefix("# shellcheck shell=sh\n").rstrip()
    assert parts in wrapper and parts in job
    assert wrapper.count(".secrets.env") == job.count(".secrets.env") == parts.count(".secrets.env")  # once, shared
    assert CONFINE_SH in wrapper and CONFINE_SH in job  # the job sweeps what carries its mark, as the session does


def test_a_value_the_template_does_not_get_is_an_error_not_a_script():
    with pytest.raises(KeyError, match="no value for @COMMAND@"):
        render("slurm_job.sh", LIBRARY="", STEP_DIR="/x", PLACEHOLDER="running", MARK="r/s", MARK_PATTERN="r/s", CLEANUP="")


def test_the_wheel_ships_every_template():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["reprokit"]
    shipped = [p for p in sorted(SCRIPTS_DIR.glob("*.sh"))
               if any(fnmatch(str(p.relative_to(REPO / "reprokit")), pattern) for pattern in patterns)]
    assert shipped == sorted(SCRIPTS_DIR.glob("*.sh")) and len(shipped) == 6


def test_the_container_entry_and_the_code_unpacking_are_the_files_as_shipped(tmp_path):
    """The docker secrets entry reaches the container as the file's code (quoted once more for the wrapper's sh -c)."""
    entry = (SCRIPTS_DIR / "container_secrets.sh").read_text(encoding="utf-8").removeprefix("# shellcheck shell=sh\n")
    inner = shlex.split(docker_command_with_secrets(tmp_path))[2]
    words = shlex.split(inner)
    at = words.index("-c")
    assert words[at - 1:at + 3] == ["sh", "-c", entry.rstrip("\n"), "/run/reprokit-secrets"]
    script = render("ship_code.sh", STAGED="S", ARCHIVE="A", CODE_DIR="C")
    assert "@" not in script and script.count("tar -xzf") == 1
