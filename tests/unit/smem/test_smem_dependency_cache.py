"""The object cache keyed by the bytes nvcc read: found again from another wheel's directory, missed on one changed byte."""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.workloads.static_smem.nvcc import Compile, Compiler


def wheel_tree(root: Path, header_value: int) -> Path:
    (root / "include").mkdir(parents=True)
    (root / "include" / "sizes.h").write_text(f"#pragma once\nconstexpr int kSize = {header_value};\n")
    return root


def compile_in(nvcc, tmp: Path, wheel: Path, name: str, cache: Path) -> tuple[Compiler, Compile]:
    probe = tmp / name / "probe"
    probe.mkdir(parents=True)
    source = probe / "probe.cu"
    source.write_text('#include "sizes.h"\nint size() { return kSize; }\n')
    compiler = Compiler(nvcc, cache, 1, path_roots={"<wheel>": wheel, "<probe>": probe})
    job = Compile("probe", ["-std=c++17", f"-I{wheel / 'include'}", "-c", str(source)], probe / "probe.o",
                  probe / "probe.log", inputs_text=source.read_text())
    compiler.run_all([job])
    return compiler, job


def test_same_bytes_in_another_directory_hit_one_changed_byte_misses(nvcc, tmp_path: Path) -> None:
    cache = tmp_path / "obj"
    first, _ = compile_in(nvcc, tmp_path, wheel_tree(tmp_path / "wheel-a", 7), "a", cache)
    assert (first.cache_hits, [name for name, _ in first.compiled]) == (0, ["probe"])
    (entry_file,) = (cache / "by-deps").glob("*.json")
    (entry,) = json.loads(entry_file.read_text())
    assert "<wheel>/include/sizes.h" in entry["deps"] and "<probe>/probe.cu" in entry["deps"]

    second, job = compile_in(nvcc, tmp_path, wheel_tree(tmp_path / "wheel-b", 7), "b", cache)
    assert (second.cache_hits, second.compiled) == (1, [])
    assert job.log.read_text().startswith("(object cache hit by dependencies: ")
    assert str(tmp_path / "wheel-b" / "include" / "sizes.h") in job.depfile.read_text()  # this run's paths

    third, _ = compile_in(nvcc, tmp_path, wheel_tree(tmp_path / "wheel-c", 8), "c", cache)
    assert (third.cache_hits, [name for name, _ in third.compiled]) == (0, ["probe"])
    assert len(json.loads(entry_file.read_text())) == 2  # both versions of the header are remembered
