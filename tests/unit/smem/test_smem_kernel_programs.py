"""The kernels a speculative compile did not guess are compiled under names of their own.

On SM120 the analysis compiles the kernels it expects (from the parsed sources) while the tactics probe compiles;
the tactics probe then names the kernels really used, and those the guess missed are compiled afterwards. With one
nvcc job both compiles were named ``kernels``: the second one's object and program replaced the first's, and the
first's 20 kernels were read from a program that printed the second's 12 (FlashInfer 0.7.2.post1, sm120, on a
one-job host: "probe program kernels printed 12 records for 20 kernels"). Here nvcc is a stand-in that keeps, as
each "object", the kernels its source lists, and the linked "program" prints them.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from reprokit.workloads.static_smem import codegen, workload
from reprokit.workloads.static_smem.codegen import KernelVariant


def _variant(m: int, n: int, fusion: str, swap: bool) -> KernelVariant:
    return KernelVariant("Sm120", "SafeFP4", "SafeFP4", "bf16", "__nv_bfloat16", "void", fusion, (m, n, 256),
                         (1, 1, 1), False, False, swap)


def _variants(tiles: list[tuple[int, int]]) -> list[KernelVariant]:
    return [_variant(m, n, f, s) for m, n in tiles for f in ("NONE", "FINALIZE") for s in (False, True)]


class StandInCompiler:
    """Compiles by copying the source to the object; links by printing the records the object lists."""

    def __init__(self) -> None:
        self.objects: dict[Path, str] = {}

    def run_all(self, jobs: list) -> None:
        for job in jobs:
            self.objects[job.output] = job.source.read_text()

    def link_and_run(self, name, objects, gencode, work_dir, log) -> list[str]:
        return self.objects[objects[0]].splitlines()


class Cache:
    def get(self, name):
        return None

    def put(self, name, entry):
        pass

    def exists(self, name):
        return False


def _analysis(tmp_path: Path, monkeypatch, jobs: int) -> workload.Analysis:
    analysis = workload.Analysis.__new__(workload.Analysis)
    analysis.options = SimpleNamespace(jobs=jobs, arch=SimpleNamespace(gencode="-arch=sm_120a"), dtype="nvfp4")
    analysis.probe_dir, analysis.log_dir = tmp_path / "probe", tmp_path / "logs"
    analysis.probe_dir.mkdir()
    analysis.cache, analysis.headers, analysis.nvcc_versions = Cache(), {}, set()
    analysis._compiler, analysis._nvcc = StandInCompiler(), SimpleNamespace(version="13.0")
    monkeypatch.setattr(analysis, "_prepare_probe_dir", lambda: None)
    monkeypatch.setattr(analysis, "_common_objects", lambda: [])
    monkeypatch.setattr(analysis, "_record_headers", lambda jobs: {})
    monkeypatch.setattr(analysis, "_compile", lambda name, source, language_cu=False: SimpleNamespace(
        name=name, source=source, output=analysis.probe_dir / f"{name}.o"))
    monkeypatch.setattr(codegen, "kernel_program", lambda chunk, arch, dtype: "".join(
        json.dumps({"cta": "x".join(map(str, v.cta)), "fusion": v.fusion, "swap_ab": v.swap_ab}) + "\n" for v in chunk))
    return analysis


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_the_kernels_the_guess_missed_do_not_replace_the_guessed_ones(tmp_path, monkeypatch, jobs):
    analysis = _analysis(tmp_path, monkeypatch, jobs)
    guessed = _variants([(128, 256), (256, 128), (128, 128), (256, 64), (64, 256)])  # 20 kernels
    missed = _variants([(128, 32), (128, 64), (128, 192)])  # 12 the tactics probe named besides
    analysis._speculative = analysis._kernel_programs(guessed, max(1, jobs - 1))
    analysis.compiler.run_all([job for job, _ in analysis._speculative])
    found = analysis.kernels(guessed + missed)
    assert sorted(found) == sorted(v.key for v in guessed + missed)
    names = [p.name for p in analysis.probe_dir.glob("*.cu")]
    assert len(names) == len(set(names)) and any(n.startswith("kernels-more") for n in names), names
