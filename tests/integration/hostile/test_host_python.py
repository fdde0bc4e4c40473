"""A host whose ``ansible_python_interpreter`` cannot run: every step's files are listed and read by it, so the run
is refused before the host's lock and the record, in one line naming the inventory's line and the fix (before:
the fingerprint ran, its files could not be listed, and the run ended `incomplete` for an `invoke collect` that
failed the same way for ever)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.errors import ExitCode
from tests.conftest import run_invoke
from tests.integration.remote.conftest import REASON, host_workdir, known_hosts_for, write_inventory

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def test_a_host_python_that_cannot_run_is_refused_before_the_lock_and_the_record(tmp_path: Path):
    work = host_workdir("h4", "no-python")
    inv = write_inventory(tmp_path / "inv.yml", {"h4": {"workdir": work, "ansible_python_interpreter":
                                                        "/opt/none/python3"}}, gpu=False)
    proc = run_invoke("repro", "smem-probe", "--host", "h4", "--inventory", str(inv), "--known-hosts",
                      str(known_hosts_for(tmp_path / "known_hosts", "h4")), "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: {inv}:7: host 'h4': its Python /opt/none/python3 cannot run there (bash: line 1: /opt/none/python3:"
        " No such file or directory); set ansible_python_interpreter of h4 to a Python 3.8 or later on that host"
        " (e.g. /usr/bin/python3)"]
    assert not (tmp_path / "runs").exists() and not (work / "locks").exists() and list((work / "runs").iterdir()) == []
