"""A source bundle stages exactly the sources a wheel gives, under the wheel's sha256, with no wheel on the host."""

from __future__ import annotations

import pytest

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.static_smem import source_bundle
from reprokit.workloads.static_smem import wheel as wheels


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_unpacked_sources_are_the_wheels_own_bytes_under_its_sha256(fetch_wheel, wheel_cache, tmp_path) -> None:
    wheel = fetch_wheel("0.6.3")
    bundle = tmp_path / "sources.tar.xz"
    counts = source_bundle.pack(["0.6.3"], bundle, wheel_cache, preset=0)
    files = _files(wheel.root)
    assert counts["releases"] == 1
    assert counts["files"] == len(files)
    assert counts["distinct_files"] < counts["files"]  # the wheel repeats some headers byte for byte

    host_cache = tmp_path / "host-cache"
    assert source_bundle.unpack(bundle, host_cache) == 1
    staged = wheels.fetch("0.6.3", host_cache)
    assert staged.sha256 == wheel.sha256
    assert not staged.path.exists()  # no wheel travelled, and none was downloaded
    assert _files(staged.root) == files
    assert all((staged.root / f).read_bytes() == (wheel.root / f).read_bytes() for f in files)


def test_a_record_without_its_sources_names_itself_and_what_to_do(tmp_path) -> None:
    record = wheels.sha256_record(tmp_path / "wheels" / wheels.wheel_file_name("0.6.3"))
    record.parent.mkdir(parents=True)
    record.write_text("0fe2de934a4b3690" + "0" * 48 + "\n")
    with pytest.raises(WorkloadError) as caught:
        wheels.fetch("0.6.3", tmp_path)
    assert caught.value.code == Exit.MISSING_DEPENDENCY
    assert str(caught.value).startswith(f"{record}: the sources of flashinfer_python-0.6.3-py3-none-any.whl")
    assert "unpack the source bundle again" in str(caught.value)
