"""`invoke bisect`: the version range, pip's listing, the binary search, and one real analysis."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

import reprokit.fix.bisect as bisect_module
from reprokit.errors import ConfigError
from reprokit.fix.bisect import bisect, parse_pip_index, parse_range, static_verdict, versions_between
from reprokit.workloads.static_smem import wheel as wheels

# `pip index versions flashinfer-python` on 2026-11-29 (pip 24, this machine), abridged to 0.6.x
PIP_OUTPUT = """\
flashinfer-python (0.7.4)
Available versions: 0.7.4, 0.7.2.post1, 0.7.0, 0.6.9, 0.6.8.post1, 0.6.8, 0.6.7.post3, 0.6.7.post2, 0.6.7.post1, 0.6.7, 0.6.6, 0.6.5, 0.6.4, 0.6.3, 0.6.2
  INSTALLED: 0.6.3
  LATEST:    0.7.4
"""


def test_parse_range() -> None:
    assert parse_range("0.6.3..0.6.8") == ("0.6.3", "0.6.8")
    for bad in ("0.6.3", "0.6.8..0.6.3", "0.6.3..0.6.3", "a..b", "0.6.3...0.6.8"):
        with pytest.raises(ConfigError, match="expected OLD..NEW"):
            parse_range(bad)


def test_versions_between() -> None:
    available = parse_pip_index(PIP_OUTPUT) + ["0.6.8rc1", "0.6.5.dev3"]
    assert len(available) == 17
    assert versions_between(available, "0.6.3", "0.6.8") == [
        "0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7", "0.6.7.post1", "0.6.7.post2", "0.6.7.post3", "0.6.8"]
    assert versions_between(available, "0.6.7.post3", "0.6.8rc1") == ["0.6.7.post3", "0.6.8rc1"]
    with pytest.raises(ConfigError, match="flashinfer-python 0.6.99 is not on the package index; newest there: 0.7.4, "):
        versions_between(available, "0.6.3", "0.6.99")


def test_no_versions_in_other_output() -> None:
    assert parse_pip_index("ERROR: No matching distribution found for flashinfer-python\n") == []


@pytest.mark.parametrize("count", [2, 3, 9, 17])
def test_bisect_finds_every_change_point_in_few_probes(count: int) -> None:
    versions = [f"1.{i}" for i in range(count)]
    for change in range(1, count):
        probes: list[str] = []

        def verdict_of(version: str, change: int = change, probes: list[str] = probes) -> str:
            probes.append(version)
            return "fails" if versions.index(version) < change else "fits"

        result = bisect(versions, verdict_of)
        assert (result["first_changed"], result["last_unchanged"]) == (versions[change], versions[change - 1])
        assert (result["from"], result["to"]) == ("fails", "fits")
        assert len(probes) == len(set(probes)) <= 2 + math.ceil(math.log2(count - 1))
        assert list(result["probed"]) == [v for v in versions if v in probes]


def test_bisect_when_the_ends_agree() -> None:
    result = bisect(["0.6.3", "0.6.4", "0.6.5"], lambda v: "fails")
    assert result["first_changed"] is None and result["probed"] == {"0.6.3": "fails", "0.6.5": "fails"}


@pytest.mark.slow
@pytest.mark.network
def test_static_verdict_from_the_real_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One real run of the workload for one tile (minutes with nvcc on a fresh cache, a second once cached)."""
    if shutil.which("nvcc") is None and not (wheels.default_cache_dir() / "static_smem" / "results").is_dir():
        pytest.skip("no nvcc and no cached static-smem results: the analysis cannot run here")
    # 0.6.7.post2 (sglang 0.5.10's pin) taken out of the fit table, which now has it: the workload runs
    in_table = bisect_module.table_verdict
    monkeypatch.setattr(bisect_module, "table_verdict",
                        lambda version, arch, tile: None if version == "0.6.7.post2" else in_table(version, arch, tile))
    assert static_verdict("0.6.7.post2", "sm120", "128x256x128", tmp_path / "a") == "fails"
    assert static_verdict("0.6.7.post2", "sm120", "128x128x128", tmp_path / "b") == "fits"
    assert (tmp_path / "a" / "result.json").is_file()
    # a release the fit table has is read from it: no workload run, no run directory
    assert static_verdict("0.6.3", "sm120", "128x256x128", tmp_path / "c") == "fails"
    assert not (tmp_path / "c").exists()


def test_static_verdict_names_the_version_when_the_analysis_fails(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"flashinfer 0.6.3 \(sm999\): the static analysis failed \(exit 2\): arch 'sm999' is not analysed"):
        static_verdict("0.6.3", "sm999", "128x256x128", tmp_path / "bad")
