"""A run on a real SSH test host: each pulled byte is hashed once on the control machine, as it arrives."""

from __future__ import annotations

import pytest

from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run import kit_run
from tests.integration.hostile.conftest import RESULT_OK, Rig
from tests.integration.remote.conftest import REASON
from tests.unit.records.hashcount import hashed  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

BIG_BYTES = 6 << 20  # over the size that goes through the OpenSSH bulk path
SMALL = 30
WRITTEN_AT_THE_END = ("verdict.json", "report.md", "report.html")
WRITTEN_AT_THE_START = "kit/"  # the kit file as the run read it, kept by this machine, never pulled


def test_a_remote_record_hashes_each_pulled_byte_once(tmp_path, hashed, monkeypatch) -> None:  # noqa: F811
    at_conclude = {}

    def conclude(*args, **kwargs):
        at_conclude["pullback"] = hashed.by_module.get("reprokit.hosts.pullback", 0)
        at_conclude["total"] = hashed.bytes
        return real_conclude(*args, **kwargs)

    real_conclude = kit_run.conclude
    monkeypatch.setattr(kit_run, "conclude", conclude)
    rig = Rig(tmp_path, "records-hash-once")
    body = (f"head -c {BIG_BYTES} /dev/urandom > big.bin; mkdir -p small;"
            f" for i in $(seq 1 {SMALL}); do head -c 4096 /dev/urandom > small/f$i.bin; done; " + RESULT_OK)
    outcome, _, _ = rig.run(body)
    manifest = load_manifest(outcome.run_dir)
    assert manifest.status == "complete", rig.messages
    sizes = {rel: artifact.bytes for rel, artifact in manifest.artifacts.items()}
    pulled_bytes = sum(size for rel, size in sizes.items()
                       if rel not in WRITTEN_AT_THE_END and not rel.startswith(WRITTEN_AT_THE_START))
    assert [rel for rel in sizes if rel.startswith(WRITTEN_AT_THE_START)] == ["kit/smem-probe.yml"]
    assert sizes["steps/probe/big.bin"] == BIG_BYTES and len([r for r in sizes if "/small/" in r]) == SMALL
    # while pulling, every byte was hashed as it arrived (plus the short names of the partial files)
    assert 0 <= at_conclude["pullback"] - pulled_bytes < 2048
    # judging, reporting and listing the artifacts hashed only what was written then, nothing pulled a second time
    assert hashed.bytes - at_conclude["total"] == sum(sizes[rel] for rel in WRITTEN_AT_THE_END)
    assert verify_record(outcome.run_dir) == []
