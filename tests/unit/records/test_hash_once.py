"""Each byte of a record is hashed once on the control machine; a file changed afterwards is hashed again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from reprokit.config.inventory import local_host
from reprokit.hosts.access.local import LocalConnection
from reprokit.hosts.host_files import stage_on_host
from reprokit.records.atomic import write_bytes_atomic, write_json_atomic
from reprokit.records.digests import DIGESTS
from reprokit.records.inputs import InputFile
from reprokit.records.run_dir import RunRecord, verify_record
from tests.unit.records.hashcount import hashed  # noqa: F401 - the fixture

SMALL = 4096


def record_bytes(record: RunRecord) -> int:
    return sum(a.bytes for a in record.manifest.artifacts.values())


def test_a_finished_local_record_hashes_each_byte_once(tmp_path: Path, hashed) -> None:  # noqa: F811
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo"}, fingerprint=None, verdict=None)
    out = record.step_dir("probe")
    (out / "big.bin").write_bytes(os.urandom(3 << 20))  # as a workload process writes it: hashed when listed
    for i in range(20):
        (out / f"f{i}.bin").write_bytes(os.urandom(SMALL))
    write_json_atomic(out / "result.json", {"status": "ok"})  # hashed as written
    source = record.dir / "fingerprint" / "result.json"
    write_json_atomic(source, {"devices": []})
    item = InputFile("predicted", source, DIGESTS.sha256_of(source), source.stat().st_size, "step fingerprint", False)
    host = LocalConnection.open_for(local_host(), None, None, runs_dir=tmp_path / "runs")
    step_dir = f"{host.host.workdir}/runs/r1/sweep"
    stage_on_host(host, step_dir, [item])  # onto the host (this machine), verified there by the host's sha256sum
    host.pull_back(1 << 30, 1000).pull(step_dir, record.step_dir("sweep"))  # back with the step: hashed once
    write_json_atomic(record.dir / "verdict.json", {"verdict": "PASS"})
    record.hash_artifacts()  # the HTML report lists the artifacts before the manifest does
    record.finish("complete")
    assert len(record.manifest.artifacts) == 25
    assert hashed.bytes == record_bytes(record) == (3 << 20) + 20 * SMALL + sum(
        (record.dir / rel).stat().st_size for rel in record.manifest.artifacts if rel.endswith(".json"))
    assert verify_record(record.dir) == []


def test_the_manifest_is_not_hashed_at_each_save(tmp_path: Path, hashed) -> None:  # noqa: F811
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo"})
    for _ in range(5):
        record.update(preflight_notes=["x" * 1000])
    assert hashed.bytes == 0


def test_a_file_changed_in_place_after_it_was_written_is_hashed_again(tmp_path: Path, hashed) -> None:  # noqa: F811
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo"})
    path = record.dir / "steps" / "probe" / "result.json"
    write_bytes_atomic(path, b"aaaa")
    before = path.stat()
    with open(path, "r+b") as fh:  # same size, same inode, the old mtime put back: only the ctime tells
        fh.write(b"bbbb")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    record.finish("complete")
    assert record.manifest.artifacts["steps/probe/result.json"].sha256 == hashlib.sha256(b"bbbb").hexdigest()
    assert hashed.bytes == 8  # written once, read again once
    assert verify_record(record.dir) == []


def test_a_file_replaced_after_it_was_written_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write_bytes_atomic(path, b"one")
    (tmp_path / "b.json").write_bytes(b"two")
    os.replace(tmp_path / "b.json", path)  # another inode at the same path
    assert DIGESTS.sha256_of(path) == hashlib.sha256(b"two").hexdigest()


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, hashed) -> None:  # noqa: F811
    path = tmp_path / "a.bin"
    digest = write_bytes_atomic(path, b"x" * 1000)
    assert hashed.bytes == 1000
    assert DIGESTS.sha256_of(path) == digest == hashlib.sha256(b"x" * 1000).hexdigest()
    assert hashed.bytes == 1000


def test_a_finished_record_is_forgotten(tmp_path: Path, hashed) -> None:  # noqa: F811
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo"})
    write_json_atomic(record.dir / "verdict.json", {"verdict": "PASS"})
    record.finish("complete")
    written = hashed.bytes
    assert DIGESTS.sha256_of(record.dir / "verdict.json") == record.manifest.artifacts["verdict.json"].sha256
    assert hashed.bytes == 2 * written  # read from its bytes: the record's digests were dropped when it was finished
