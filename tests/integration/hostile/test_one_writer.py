"""One writer per record: two `invoke collect` of one record at once (the N3 sequence of issue #28).

Before, both wrote the same partial files and both said they had collected; the second read the step's exit
code after the first had deleted the host's copy, so a step that exited 0 was recorded as `error`. Now the
second waits for the record's lock, then finds it complete and refuses in one line.
"""

from __future__ import annotations

import subprocess
import sys

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.conftest import REPO
from tests.integration.hostile.conftest import RESULT_OK, step

BIG = "head -c 300000 /dev/urandom > big.bin; " + RESULT_OK


def test_two_collects_at_once_one_waits_and_the_record_ends_right(rig, tmp_path):
    outcome, manifest, _ = rig.run(BIG, options=rig.options(max_pull_bytes=200000))
    assert manifest["status"] == "incomplete"
    argv = [sys.executable, "-m", "invoke", "--search-root", str(REPO), "collect", outcome.run_dir.name, "--runs-dir",
            str(rig.runs), "--inventory", str(tmp_path / "inv.yml"), "--known-hosts", str(rig.known)]
    procs = [subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = sorted((p.wait(timeout=180), *p.communicate()) for p in procs)
    codes = [code for code, _, _ in results]
    # the one that collected: the probe saw no GPU, so the kit FAILs; the other: nothing left to collect
    assert codes == [ExitCode.FAIL, ExitCode.BAD_INPUT], results
    refused = results[1][2].strip().splitlines()
    assert refused[-1] == (f"error: {outcome.run_dir}: run is 'complete'; only a detached, incomplete or killed run has"
                           " files to collect")
    manifest = load_manifest(outcome.run_dir).to_json()
    assert manifest["status"] == "complete"
    assert step(manifest)["status"] == "ok" and step(manifest)["exit_code"] == 0 and step(manifest)["collected"] is True
    assert (outcome.run_dir / "steps" / "probe" / "big.bin").stat().st_size == 300000
    assert verify_record(outcome.run_dir) == []
    assert rig.remote_runs() == []
    assert not list(rig.runs.glob(".partial-*")) and not list(outcome.run_dir.rglob(".partial-*"))
