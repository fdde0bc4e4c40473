"""The hostile-host suite: one real OpenSSH test host (tests/services/up.d/10-sshhosts.sh) doing what it should not.

Every test reproduces one defect of issue #17 against the real sshd host and asserts the safe outcome. The step
is the smem-probe kit with the host's Python replaced by a shell test double (`fake_python`), so each test
says in a few lines of sh what the hostile workload does on the host.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reprokit.config.kit import load_kit_file
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions
from reprokit.records.run_dir import load_manifest
from reprokit.run.kit_run import run_kit
from tests.conftest import REPO
from tests.doubles.libcuda import gpu_python
from tests.integration.remote.conftest import ADDRESSES, REASON, STATE, host_workdir, known_hosts_for

HOST = "h2"  # one host for the whole suite; each test has its own workdir on it
RESULT_OK = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
             ' echo "probe done"; exit 0')
KIT = REPO / "kits" / "smem-probe.yml"

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def inventory_file(path: Path, workdir: str | Path, **hostvars) -> Path:
    """An inventory whose values are JSON-quoted, so any byte sequence (`;`, quotes, newlines) survives YAML."""
    values = {"ansible_host": ADDRESSES[HOST], "ansible_user": "rkuser",
              "ansible_ssh_private_key_file": str(STATE / "id_ed25519"), "runtime": "native", "ansible_python_interpreter": str(gpu_python()),
              "workdir": str(workdir), **hostvars}
    lines = ["all:", "  hosts:", f"    {HOST}:"] + [f"      {k}: {json.dumps(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def fake_python(directory: Path, body: str) -> Path:
    """A test double for the host's Python: `body` (sh, run in the step directory) for the probe, the GPU host's otherwise."""
    script = directory / "fake-python"
    script.write_text('#!/bin/sh\ncase "$*" in\n  *smem_probe*)\n' + body + f'\n    ;;\nesac\nexec {gpu_python()} "$@"\n')
    script.chmod(0o755)
    shutil.chown(script, "rkuser", "rkuser")
    return script


class Rig:
    """One test's workdir on the host, its inventory and known_hosts, and a way to run the probe kit there."""

    def __init__(self, tmp_path: Path, tag: str):
        self.tmp_path = tmp_path
        self.work = host_workdir(HOST, tag)
        self.known = known_hosts_for(tmp_path / "known_hosts", HOST)
        self.runs = tmp_path / "runs"
        self.messages: list[str] = []

    def inventory(self, body: str, workdir: str | Path | None = None, **hostvars):
        python = fake_python(self.work, body)
        path = inventory_file(self.tmp_path / "inv.yml", workdir or self.work, ansible_python_interpreter=str(python),
                              **hostvars)
        return load_inventory(path)

    def options(self, **fields) -> ConnectOptions:
        return ConnectOptions(known_hosts=self.known, **fields)

    def run(self, body: str, kit: Path = KIT, workdir: str | Path | None = None, options: ConnectOptions | None = None,
            **hostvars):
        inv = self.inventory(body, workdir, **hostvars)
        outcome = run_kit(load_kit_file(kit), kit, inv.host(HOST), self.runs, kit.parent, say=self.messages.append,
                          inventory=inv, options=options or self.options())
        return outcome, load_manifest(outcome.run_dir).to_json(), inv

    def remote_runs(self) -> list[Path]:
        return sorted((self.work / "runs").iterdir()) if (self.work / "runs").exists() else []


def step(manifest: dict, name: str = "probe") -> dict:
    return next(s for s in manifest["steps"] if s["name"] == name)


@pytest.fixture
def rig(tmp_path, request) -> Rig:
    return Rig(tmp_path, f"hostile-{request.node.name[:40]}")
