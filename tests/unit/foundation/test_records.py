import hashlib
import json
import os
import subprocess
import sys

from reprokit.records.atomic import write_json_atomic
from reprokit.records.models import Artifact
from reprokit.records.run_dir import RunRecord, load_manifest, new_run_id, verify_record


def test_manifest_lifecycle_and_hashes(tmp_path):
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo"})
    assert load_manifest(record.dir).status == "running"
    (record.step_dir("probe") / "result.json").write_text('{"status": "ok"}\n')
    record.finish("complete")
    manifest = load_manifest(record.dir)
    assert manifest.status == "complete"
    assert manifest.artifacts == {"steps/probe/result.json": Artifact(hashlib.sha256(b'{"status": "ok"}\n').hexdigest(), 17)}
    assert verify_record(record.dir) == []


def test_verify_finds_changed_missing_and_extra_files(tmp_path):
    record = RunRecord.create(tmp_path, "r2")
    (record.dir / "a.txt").write_text("a")
    (record.dir / "b.txt").write_text("b")
    record.finish("complete")
    (record.dir / "a.txt").write_text("A")
    (record.dir / "b.txt").unlink()
    (record.dir / "c.txt").write_text("c")
    assert verify_record(record.dir) == [
        "a.txt: sha256 differs from the manifest", "b.txt: missing", "c.txt: not listed in the manifest"]


def test_killed_owner_is_reported(tmp_path):
    # A child process creates the record and dies without finalising it (as with SIGKILL).
    code = ("import sys; from reprokit.records.run_dir import RunRecord; "
            f"RunRecord.create({str(tmp_path)!r}, 'r3'); import os; os._exit(9)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    manifest = load_manifest(tmp_path / "r3")
    assert manifest.status == "killed"
    assert "never finalised the manifest" in manifest.status_detail
    raw = json.loads((tmp_path / "r3" / "manifest.json").read_text())
    assert raw["status"] == "running"


def test_atomic_write_keeps_old_file_when_serialisation_fails(tmp_path):
    path = tmp_path / "m.json"
    write_json_atomic(path, {"v": 1})

    class Boom:
        def __str__(self):
            raise RuntimeError("boom")

    try:
        write_json_atomic(path, {"v": Boom()})
    except RuntimeError:
        pass
    assert json.loads(path.read_text()) == {"v": 1}
    assert os.listdir(tmp_path) == ["m.json"]


def test_run_ids_are_unique_and_sortable():
    ids = {new_run_id("smem-probe", "local") for _ in range(50)}
    assert len(ids) == 50
    assert all(i[:8].isdigit() and "-smem-probe-local-" in i for i in ids)
