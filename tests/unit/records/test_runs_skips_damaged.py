"""`invoke runs` lists a directory with one damaged manifest: that record skipped with a warning, the rest shown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_invoke
from tests.unit.records.test_models import EP8_H200


def test_one_damaged_manifest_is_skipped_with_a_warning(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    good = runs / EP8_H200.name
    shutil.copytree(EP8_H200, good)
    bad = runs / "20261201T000000Z-smem-probe-h1-dead"
    bad.mkdir()
    data = json.loads((EP8_H200 / "manifest.json").read_text())
    data["status"] = "paused"
    (bad / "manifest.json").write_text(json.dumps(data))
    done = run_invoke("runs", "--runs-dir", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    assert [r["run_id"] for r in json.loads(done.stdout)] == [data["run_id"]]
    assert done.stderr.strip().splitlines() == [
        f"warning: skipped {bad.name}: {bad / 'manifest.json'}: status: expected one of"
        " running|complete|failed|interrupted|detached|incomplete|killed, got 'paused'"]
