"""Facts read from the wheel's sources: candidates, dispatch cases, flags, versions.

Offline tests read verbatim excerpts of the wheels (fixtures/); the ones marked
``network`` read the pinned wheels themselves and show the lists change across 0.6.x.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.workloads.static_smem import sources
from reprokit.workloads.static_smem.sources import SourceError

FIXTURES = Path(__file__).parent / "fixtures"
FP4_BITS = 4


def excerpt(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_candidates_0_6_3_are_the_four_grouped_tiles_in_order() -> None:
    tiles = sources.sm120_grouped_candidates(excerpt("get_candidate_configs_sm120-0.6.3.cpp"))
    assert [t.name for t in tiles] == ["CtaShape128x128x128B", "CtaShape128x128x64B",
                                       "CtaShape128x256x64B", "CtaShape256x128x64B"]
    assert [t.tile(FP4_BITS) for t in tiles] == ["128x128x256", "128x128x128", "128x256x128", "256x128x128"]


def test_candidates_0_6_8_are_six_tiles_in_a_new_order() -> None:
    tiles = sources.sm120_grouped_candidates(excerpt("get_candidate_configs_sm120-0.6.8.cpp"))
    assert [t.name for t in tiles] == ["CtaShape128x128x128B", "CtaShape128x128x64B", "CtaShape256x128x64B",
                                       "CtaShape128x256x64B", "CtaShape128x128x256B", "CtaShape256x128x128B"]


def test_fast_build_branch_is_not_taken() -> None:
    # Both excerpts list a single FAST_BUILD tile first; the JIT builds without FAST_BUILD.
    code = excerpt("get_candidate_configs_sm120-0.6.3.cpp")
    assert "#ifdef FAST_BUILD" in code
    assert len(sources.sm120_grouped_candidates(code)) == 4


def test_dispatch_shape_cases_and_the_k_conversion() -> None:
    code = excerpt("dispatch_tile_shape-0.6.3.h")
    assert [t.name for t in sources.dispatch_shape_cases(code, 120)] == [
        "CtaShape128x128x64B", "CtaShape128x128x128B", "CtaShape128x256x64B", "CtaShape256x128x64B"]
    assert len(sources.dispatch_shape_cases(code, 90)) == 6
    assert sources.dispatch_converts_k_bytes(code)
    assert not sources.dispatch_converts_k_bytes(code.replace("(K * 8) /", "K /"))


def test_commented_out_shape_cases_do_not_count() -> None:
    code = excerpt("dispatch_tile_shape-0.6.3.h")
    assert "// SHAPE_CASE(100, 128, 128, 64)" in code
    assert (128, 128, 64) not in [(t.m, t.n, t.k_bytes) for t in sources.dispatch_shape_cases(code, 100)]


def test_cpp_helpers() -> None:
    code = 'int f(int a) { if (a) { return "}"[0]; } /* } */ return 0; }\nint g();'
    assert sources.function_body(code, "f").strip().endswith("return 0;")
    with pytest.raises(SourceError, match="no definition of g"):
        sources.function_body(code, "g")
    text = "#ifdef X\nA\n#else\nB\n#endif\n#ifndef X\nC\n#endif"
    assert sources.preprocess(text).split() == ["B", "C"]
    assert sources.preprocess(text, frozenset({"X"})).split() == ["A"]
    assert sources.strip_comments('a // b\n"// c" /* d */ e') == 'a \n"// c"  e'


def test_tactic_indexing_needs_the_binding_to_concatenate() -> None:
    binding = ("mAllProfiles = gemm1_tactics;\n"
               "mAllProfiles.insert(mAllProfiles.end(), gemm2_tactics.begin(), gemm2_tactics.end());")
    core = "return list(range(gemm1_count, gemm1_count + gemm2_count))"
    indexing = sources.tactic_indexing(core, binding)
    assert indexing.rule.startswith("gemm1 tactics are 0..n1-1")
    assert len(indexing.evidence) == 2
    with pytest.raises(SourceError, match="mAllProfiles"):
        sources.tactic_indexing(core, "")


def test_versions() -> None:
    assert sources.cutlass_version('#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 1\n'
                                   '#define CUTLASS_REVISION ""') == {"version": "4.2.1", "revision": None}
    assert sources.build_meta('__version__ = "0.6.3"\n__git_version__ = "d0886ce"\n') == {
        "version": "0.6.3", "git_commit": "d0886ce"}


@pytest.mark.network
def test_the_pinned_wheels_enumerate_different_candidates(fetch_wheel) -> None:
    found = {}
    for version in ("0.6.3", "0.6.7", "0.6.8"):
        package = fetch_wheel(version).package
        found[version] = [t.tile(FP4_BITS) for t in
                          sources.sm120_grouped_candidates(sources.read(package, sources.HEURISTIC))]
        shape_cases = sources.dispatch_shape_cases(sources.read(package, sources.DISPATCH_TMA_WS), 120)
        assert [t.tile(FP4_BITS) for t in shape_cases] == ["128x128x128", "128x128x256", "128x256x128", "256x128x128"]
        assert sources.dispatch_converts_k_bytes(sources.read(package, sources.DISPATCH_TMA_WS))
    assert found["0.6.3"] == found["0.6.7"] == ["128x128x256", "128x128x128", "128x256x128", "256x128x128"]
    assert found["0.6.8"] == ["128x128x256", "128x128x128", "256x128x128", "128x256x128", "128x128x512", "256x128x256"]


@pytest.mark.network
def test_build_facts_of_the_pinned_wheel(fetch_wheel) -> None:
    package = fetch_wheel("0.6.3").package
    assert sources.cutlass_version(sources.read(package, sources.CUTLASS_VERSION_H))["version"] == "4.2.1"
    assert sources.cutlass_version(sources.read(fetch_wheel("0.6.7").package, sources.CUTLASS_VERSION_H))["version"] == "4.4.2"
    assert sources.capacity_from_headers(package, "cutlass::arch::sm120_smem_capacity_bytes") == 101376
    assert sources.capacity_from_headers(package, "cutlass::gemm::collective::detail::sm90_smem_capacity_bytes") == 232448
    flags = sources.arch_module_flags(package, "gen_cutlass_fused_moe_sm120_module", (13, 0))
    assert {"-DCOMPILE_BLACKWELL_SM120_TMA_GROUPED_GEMMS", "-DENABLE_FP4", "-DENABLE_BF16"} <= set(flags)
    common = sources.jit_common_flags(package, (13, 0))
    assert common[0] == "-std=c++17" and "--expt-relaxed-constexpr" in common
    assert "-ccbin" not in common  # -ccbin $CC is set only when CC is, and is not a constant
    dirs = sources.include_dirs(package)
    assert package / "data" / "cutlass" / "include" in dirs
    assert package / "data" / "csrc" / "nv_internal" / "tensorrt_llm" / "cutlass_extensions" / "include" in dirs
