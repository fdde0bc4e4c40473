"""Real nvcc compiles of the wheel's own launcher (skipped, with the reason, when nvcc is absent)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reprokit.commands.smem import run_smem
from reprokit.errors import ExitCode
from reprokit.workloads.static_smem.codegen import KernelVariant
from reprokit.workloads.static_smem.options import Options
from reprokit.workloads.static_smem.workload import Analysis


def variant(fusion: str) -> KernelVariant:
    return KernelVariant("Sm120", "SafeFP4", "SafeFP4", "bf16", "__nv_bfloat16", "void", fusion,
                         (256, 128, 128), (1, 1, 1), False, False, False)


@pytest.mark.network
def test_one_tile_compiled_by_nvcc(tmp_path: Path, fetch_wheel, nvcc) -> None:
    options = Options.from_params({"flashinfer": "0.6.3", "wheel": str(fetch_wheel("0.6.3").path),
                                   "cache_dir": str(tmp_path / "cache")})
    run = Analysis(options, tmp_path / "run")
    kernels = run.kernels([variant("FINALIZE"), variant("NONE")])
    finalize = kernels["256x128x128-FINALIZE-noswap-bf16"]
    assert finalize["kernel_smem_bytes"] == 102400 and finalize["capacity_bytes"] == 101376
    assert (finalize["stages"], finalize["carveout_bytes"], finalize["epilogue_smem_bytes"]) == (3, 17408, 17408)
    assert finalize["mainloop_smem_bytes"] == 83968
    assert kernels["256x128x128-NONE-noswap-bf16"]["kernel_smem_bytes"] == 98304
    assert finalize["element_a"] == "cutlass::nv_float4_t<cutlass::float_e2m1_t>"
    assert finalize["mma_tile"] == "256x128x128" and finalize["cluster"] == "1x1x1"
    assert run.compiler.compiled and (tmp_path / "run" / "logs" / "kernels.log").is_file()
    # the same variants again come from the cache, without nvcc
    again = Analysis(Options.from_params({**{"flashinfer": "0.6.3", "wheel": str(fetch_wheel("0.6.3").path)},
                                          "cache_dir": str(tmp_path / "cache"), "nvcc": "/nonexistent"}),
                     tmp_path / "again")
    assert again.kernels([variant("FINALIZE")])["256x128x128-FINALIZE-noswap-bf16"] == finalize


@pytest.mark.network
@pytest.mark.slow
def test_the_full_sm120_table(tmp_path: Path, fetch_wheel, nvcc, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    (cache / "wheels").mkdir(parents=True)
    shutil.copy(fetch_wheel("0.6.3").path, cache / "wheels")
    assert run_smem("0.6.3", "sm120", True, 101376, 2, out_dir=tmp_path / "cold", cache_dir=cache) == ExitCode.PASS
    result = json.loads(capsys.readouterr().out)
    assert result["failing_tiles"] == ["128x256x128", "256x128x128"]
    assert result["fitting_tiles"] == ["128x128x128", "128x128x256"]
    assert result["failing_tactics"] == {"trtllm::fused_moe::gemm1": [], "trtllm::fused_moe::gemm2": [14, 15]}
    assert result["failing_tactics_optin"] == result["failing_tactics"]
    assert len(result["rows"]) == 48 and sorted({r["tactic"] for r in result["rows"]}) == list(range(24))
    assert all(r["kernel"]["stages_recomputed"] == r["stages"] for r in result["rows"])
    assert result["sources"]["cutlass"]["version"] == "4.2.1"
    assert result["cache"]["hits"] == 0
    # warm: everything from the cache, and the table
    assert run_smem("0.6.3", "sm120", False, None, 2, cache_dir=cache) == ExitCode.PASS
    table = capsys.readouterr().out
    assert "exceeds (+1024)" in table and "failing tiles: 128x256x128, 256x128x128" in table
