"""A runs directory that turns read-only mid-run is this machine's fault, said once: no retries, no traceback."""

from __future__ import annotations

import subprocess
import threading
import time

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import run_invoke
from tests.integration.hostile.conftest import HOST, RESULT_OK, step


def test_a_read_only_runs_directory_mid_run_is_one_line_and_collect_finishes_it(rig, tmp_path):
    rig.runs.mkdir()
    started = rig.work / "started"

    def freeze():
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        subprocess.run(["mount", "--bind", str(rig.runs), str(rig.runs)], check=True)
        subprocess.run(["mount", "-o", "remount,ro,bind", str(rig.runs)], check=True)
        (rig.work / "frozen").touch()

    rig.inventory(f'touch {started}; while [ ! -e {rig.work}/frozen ]; do sleep 0.1; done; echo "after the freeze";'
                  ' head -c 300000 /dev/urandom > big.bin; ' + RESULT_OK)
    where = ("--inventory", str(tmp_path / "inv.yml"), "--known-hosts", str(rig.known), "--runs-dir", str(rig.runs))
    thread = threading.Thread(target=freeze, daemon=True)
    thread.start()
    try:
        proc = run_invoke("repro", "smem-probe", "--host", HOST, *where, "--quiet", timeout=180)
        thread.join()
        (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
        assert proc.returncode == ExitCode.HOST_ERROR, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout and "resuming" not in proc.stderr, proc.stderr
        said = " ".join(proc.stderr.split())  # the console wraps at its width
        assert said.count("warning:") == 1 and said.count("error") == 0, proc.stderr
        assert (f"warning: incomplete: this machine cannot write {run_dir / 'steps'} (Read-only file"
                           f" system); make it writable; the files stay on host '{HOST}'. Bring the run back later with"
                           f" `invoke collect {run_dir.name}`") in said
        (remote_run,) = rig.remote_runs()
        assert (remote_run / "probe" / "big.bin").stat().st_size == 300000  # kept for invoke collect
        manifest = load_manifest(run_dir).to_json()  # as last written: read-only, it could not be changed
        assert (manifest["status"], manifest["in_flight"]["step"]) == ("killed", "probe")
    finally:
        subprocess.run(["umount", "-l", str(rig.runs)], check=False)
    collected = run_invoke("collect", run_dir.name, *where, "--quiet", timeout=180)
    assert collected.returncode == ExitCode.FAIL, collected.stderr  # the probe found no GPU: the kit's verdict
    manifest = load_manifest(run_dir).to_json()
    assert (manifest["status"], step(manifest)["status"]) == ("complete", "ok")
    assert (run_dir / "steps" / "probe" / "big.bin").stat().st_size == 300000
    assert verify_record(run_dir) == [] and rig.remote_runs() == []


def _repro_into(rig, tmp_path, mount_options: str, fill: bool):
    rig.runs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", mount_options, "tmpfs", str(rig.runs)], check=True)
    try:
        if fill:
            subprocess.run(["sh", "-c", f"cat /dev/zero > {rig.runs}/fill"], check=False)
        rig.inventory(RESULT_OK)
        return run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"),
                          "--known-hosts", str(rig.known), "--runs-dir", str(rig.runs), timeout=120)
    finally:
        subprocess.run(["umount", "-l", str(rig.runs)], check=False)


def test_a_runs_directory_full_from_the_start_is_one_line(rig, tmp_path):
    """Issue #40: ENOSPC while writing the manifest was a traceback."""
    proc = _repro_into(rig, tmp_path, "size=1m", fill=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == ExitCode.HOST_ERROR, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: this machine has no space left to write ") and last.endswith(
        " (No space left on device); free space there"), last
    assert not (rig.work / "lock").exists() and rig.remote_runs() == []


def test_a_runs_directory_read_only_from_the_start_is_one_line(rig, tmp_path):
    proc = _repro_into(rig, tmp_path, "ro", fill=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == ExitCode.HOST_ERROR, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("(Read-only file system); make it writable"), proc.stderr
    assert not (rig.work / "lock").exists() and rig.remote_runs() == []
