"""cutlass-tile-list: the tile candidates and the fixed-stage rule read from a header's text."""

from __future__ import annotations

import zipfile

import pytest

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.cutlass_tile_list.workload import candidate_tiles, fixed_stage_rule, run
from reprokit.workloads.triton_smem.kernels import pinned_wheel

HEADER = """
  static const std::vector<CutlassTileConfigSM120> tiles = {
      CutlassTileConfigSM120::CtaShape128x64x128B,  // small
      CutlassTileConfigSM120::CtaShape256x128x128B,
  };
"""
LAUNCHER = """#define X(T, CTA_M_, CTA_N_, CTA_K_) \\
        std::conditional_t<CTA_N_ == 256 || CTA_M_ == 256,                 \\
                           cutlass::gemm::collective::StageCount<2>,      \\
                           cutlass::gemm::collective::StageCountAutoCarveout<0>>, \\
"""
PARAMS = {"package": "demo", "version": "1.0", "source": "demo/tiles.h", "launcher": "demo/launch.h", "a_bytes": 1,
          "b_bytes": 1, "sf_vec_size": 32, "sf_bytes": 1, "archs": ["sm120", "sm90"]}


def test_tiles_and_the_stage_rule_from_text():
    assert candidate_tiles(HEADER, "tiles", "h") == [(128, 64, 128), (256, 128, 128)]
    assert fixed_stage_rule(LAUNCHER, "l") == ("CTA_N_ == 256 || CTA_M_ == 256", 2)
    with pytest.raises(WorkloadError) as caught:
        candidate_tiles(HEADER, "configs", "h")
    assert caught.value.code == Exit.BAD_PARAMS


def test_a_fixed_stage_tile_over_the_limit(tmp_path):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo/tiles.h", HEADER)
        zf.writestr("demo/launch.h", LAUNCHER)
    result = run({**PARAMS, "wheel": str(wheel)}, tmp_path)
    big = result["by_arch"]["sm120"][1]
    assert (big["tile"], big["tactics"], big["stages"], big["mainloop_bytes"]) == ("256x128x128", [2, 3], 2, 102400)
    assert big["kernel_bytes"] is None  # no epilogue_bytes given: the fit is the mainloop's
    assert result["overflowing"] == {"sm120": ["256x128x128"], "sm90": []}
    assert result["by_arch"]["sm120"][0]["stages"] == "auto" and result["by_arch"]["sm120"][0]["overflows"] is None


@pytest.mark.parametrize(("version", "tiles"), [
    ("0.6.18", ["128x32x128", "128x64x128", "128x128x128", "256x128x128", "128x256x128"]),
    ("0.7.0", ["128x32x128", "128x64x128", "128x128x128"])])
def test_flashinfer_mxfp8_sm120_tiles_before_and_after_pr_4013(tmp_path, version, tiles):
    try:
        pinned_wheel("flashinfer-python", version, None)
    except WorkloadError as exc:
        pytest.skip(f"flashinfer-python {version}'s wheel: {exc}")
    result = run({**PARAMS, "package": "flashinfer-python", "version": version,
                  "source": "flashinfer/data/include/flashinfer/gemm/mxfp8_gemm_cutlass_template_sm120.h",
                  "launcher": "flashinfer/data/include/flashinfer/gemm/mxfp8_gemm_template_sm120.h"}, tmp_path)
    assert result["tiles"] == tiles
    assert result["overflowing_tactics"]["sm120"] == ([6, 7, 8, 9] if len(tiles) == 5 else [])


def test_the_epilogue_makes_the_threads_111616_bytes(tmp_path):
    """101408 B of two stages, aligned to 1024 B (102400), plus the 9216 B epilogue: PR 3568's traced 111616 B."""
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo/tiles.h", HEADER)
        zf.writestr("demo/launch.h", LAUNCHER)
    result = run({**PARAMS, "wheel": str(wheel), "epilogue_bytes": 9216, "archs": ["sm120"]}, tmp_path)
    big = result["by_arch"]["sm120"][1]
    assert (big["mainloop_bytes"], big["kernel_bytes"], big["overflows"]) == (102400, 111616, True)
