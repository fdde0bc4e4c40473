"""The shell that runs on hosts is in files: shellcheck-clean as written and as filled in, shipped in the wheel."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from fnmatch import fnmatch

import pytest

from reprokit.hosts.launchers.session import CONFINE_SH, reap_command, wrapper_script
from reprokit.hosts.launchers.slurm import job_script
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


@needs_shellcheck
def test_the_scripts_hosts_run_are_shellcheck_clean_as_filled_in():
    scripts = {"run.sh": wrapper_script(COMMAND, 180, "docker rm -f R1-probe >/dev/null 2>&1"),
               "run.sh without cleanup": wrapper_script(COMMAND, 60),
               "job.sh": job_script("/scratch/rk work/runs/R1/probe", COMMAND),
               "reap": "#!/bin/sh\n" + reap_command("/srv/rk/runs/R1", "R1")}
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
    assert shipped == sorted(SCRIPTS_DIR.glob("*.sh")) and len(shipped) == 4
