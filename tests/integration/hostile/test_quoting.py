"""Shell metacharacters in every inventory, kit and flag value that reaches the host's shell run nothing.

The workdir and the interpreter path carry `;`, spaces, both quotes, `$( )`, backticks, `|`, `&&` and a newline;
each would create a marker file if any remote command pasted it unquoted. The test drives every command the
executor builds: prepare (mkdir, lock, code upload and unpack), the step wrapper and its launch, log streaming,
the exit-code and liveness checks, a timeout's kill, the disk check after a failed step, the pull-back (both the
SSH channel and the OpenSSH bulk path), an incomplete run's collect, unlock, the Docker preflight, and cleanup.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode, HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import executor_for
from reprokit.hosts.host_lock import HostLock, break_lock
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run.collect import collect_run
from reprokit.run.kit_run import run_kit
from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, fake_python, inventory_file, step

HOME = Path("~rkuser").expanduser()


def hostile(tag: str) -> str:
    """A path component that runs `touch rkq-<tag>-N` (in the remote shell's cwd, the user's home) if unquoted."""
    t = f"rkq-{tag}"
    return f"a b;touch {t}-1;'x'\"y\"$(touch {t}-2)`touch {t}-3`|touch {t}-4&&touch {t}-5\nz"


def markers(tag: str) -> list[Path]:
    return sorted(HOME.glob(f"rkq-{tag}-*")) + sorted(Path("/tmp").glob(f"rkq-{tag}-*"))


def test_metacharacters_in_workdir_interpreter_and_image_run_nothing(rig, tmp_path):
    tag = uuid.uuid4().hex[:8]
    workdir = rig.work / hostile(tag) / "w"
    python_dir = rig.work / hostile(tag + "py")
    python_dir.mkdir(parents=True)
    shutil.chown(python_dir, "rkuser", "rkuser")
    big = 'head -c 2000000 /dev/urandom > big.bin; '  # 2 MB: the OpenSSH bulk path
    python = fake_python(python_dir, f"    {big}{RESULT_OK}")
    inv = load_inventory(inventory_file(tmp_path / "inv.yml", workdir, ansible_python_interpreter=str(python)))

    outcome, manifest, _ = run(rig, inv)  # prepare, lock, code, wrapper, follow, pull (both paths), finish
    assert manifest["status"] == "complete", rig.messages
    assert (outcome.run_dir / "steps" / "probe" / "big.bin").stat().st_size == 2000000
    assert verify_record(outcome.run_dir) == []
    assert list((workdir / "runs").iterdir()) == []  # pulled, verified, removed

    fake_python(python_dir, "    echo failing; exit 1")  # no result.json: the disk check after a failed step
    outcome, manifest, _ = run(rig, inv)
    assert step(manifest)["status"] == "error"

    fake_python(python_dir, f"    {big}{RESULT_OK}")  # an incomplete pull-back, then collect
    outcome, manifest, _ = run(rig, inv, max_pull_bytes=1000)
    assert manifest["status"] == "incomplete"
    collect_run(outcome.run_dir, inv, rig.options(), KIT.parent, say=rig.messages.append, wait_s=30)
    assert load_manifest(outcome.run_dir).to_json()["status"] == "complete"

    kits = tmp_path / "kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text(KIT.read_text().replace("timeout_s: 180", "timeout_s: 1"))
    fake_python(python_dir, "    sleep 30")  # a timeout: the remote kill
    outcome, manifest, _ = run(rig, inv, kit=kits / "smem-probe.yml")
    assert step(manifest)["status"] == "timeout"

    lock_dir = workdir / "lock"  # unlock: a lock of another control machine, forced
    lock_dir.mkdir()
    (lock_dir / "owner.json").write_text(json.dumps({"run_id": "R", "control_host": "elsewhere", "pid": 1, "since": "x"}))
    subprocess.run(["chown", "-R", "rkuser:rkuser", str(lock_dir)], check=True)
    executor = executor_for(inv.host(HOST), inv, Path("runs"), rig.options(), say=rig.messages.append)
    executor.connect()
    break_lock(HostLock(executor.transport, HOST, f"{executor.workdir}/lock", run_id=""), rig.messages.append, force=True)
    executor.close_connection()
    assert not lock_dir.exists()

    docker_inv = load_inventory(inventory_file(tmp_path / "inv-docker.yml", workdir, runtime="docker"))
    try:  # the Docker preflight with a hostile image reference (--image workload=...)
        run(rig, docker_inv, images={"workload": f"x;touch rkq-{tag}-6 $(touch rkq-{tag}-7)"})
        raise AssertionError("an image that does not exist was accepted")
    except HostError as exc:
        assert exc.exit_code == ExitCode.HOST_ERROR
        assert str(exc) == (f"host '{HOST}': image 'workload' (x;touch rkq-{tag}-6 $(touch rkq-{tag}-7)) is not on the"
                            f" host; build it with `invoke build --host {HOST}` (or pass --image workload=REF of one that is)")
    assert markers(tag) == [] and markers(tag + "py") == []


def run(rig, inv, kit: Path = KIT, **options):
    outcome = run_kit(load_kit_file(kit), kit, inv.host(HOST), rig.runs, kit.parent, say=rig.messages.append,
                      inventory=inv, options=rig.options(**options))
    return outcome, load_manifest(outcome.run_dir).to_json(), inv


