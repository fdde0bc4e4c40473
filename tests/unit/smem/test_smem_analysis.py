"""Verdicts and explanations, from real probe output (fixtures/kernels-0.6.3-sm120.json)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from reprokit.errors import ConfigError, ExitCode
from reprokit.report.smem_table import merged_rows, print_smem_result
from reprokit.step_kinds import ResultError
from reprokit.step_kinds.static_smem import SmemRow
from reprokit.workloads.static_smem.analysis import build_rows, explain, failing_tactics, tile_verdicts

CAPACITY = 101376
FINALIZE_256 = "256x128x128-FINALIZE-noswap-bf16"
NONE_256 = "256x128x128-NONE-noswap-bf16"
FINALIZE_128_SWAP = "128x128x128-FINALIZE-swap-bf16"


def entry(tactic: int, op: str, tile: str, enum: str, fusion: str, swap: bool, error: str | None = None) -> dict:
    return {"op": f"trtllm::fused_moe::{op}", "tactic": tactic, "tile": tile, "tile_enum": enum, "fusion": fusion,
            "swap_ab": swap, "dispatch_error": error}


ENTRIES = [
    entry(3, "gemm1", "256x128x128", "CtaShape256x128x64B", "NONE", False),
    entry(15, "gemm2", "256x128x128", "CtaShape256x128x64B", "FINALIZE", False),
    entry(21, "gemm2", "128x128x128", "CtaShape128x128x64B", "FINALIZE", True),
    entry(16, "gemm2", "128x128x512", "CtaShape128x128x256B", "NONE", False,
          "Unsupported tile shape config 128128256 for MoE gemm. (moe_gemm_template_dispatch_tma_ws.h:502)"),
]
KEYS = {3: NONE_256, 15: FINALIZE_256, 21: FINALIZE_128_SWAP}


def rows(kernels: dict, optin: int | None = None, outputs=("bf16",)) -> list[dict]:
    return build_rows({o: ENTRIES for o in outputs}, kernels, lambda e, o: KEYS[e["tactic"]], CAPACITY, optin)


def test_the_launcher_types_are_the_nvfp4_sm120_ones(kernel_records: dict) -> None:
    kernel = kernel_records[FINALIZE_256]
    assert kernel["element_a"] == kernel["element_b"] == "cutlass::nv_float4_t<cutlass::float_e2m1_t>"
    assert kernel["element_sf"] == "cutlass::float_ue4m3_t"
    assert (kernel["layout_a"], kernel["layout_b"]) == ("cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor")
    assert (kernel["alignment_a"], kernel["alignment_b"], kernel["alignment_d"]) == (32, 32, 8)
    assert kernel["kernel_schedule"] == "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeBlockScaledSm120<3>"
    assert kernel["kernel_schedule_requested"] == "cutlass::gemm::collective::KernelScheduleAuto"
    assert kernel["epilogue_schedule"] == "cutlass::epilogue::TmaWarpSpecialized"
    assert kernel["stage_count_type"] == "cutlass::gemm::collective::StageCountAutoCarveout<17408>"
    assert kernel["epilogue_fusion_op"].startswith("cutlass::epilogue::fusion::ScaledAccPerColBiasPerRowScaleScatter<")
    assert kernel_records[FINALIZE_128_SWAP]["epilogue_fusion_op"].startswith(
        "cutlass::epilogue::fusion::ScaledAccPerRowBiasPerColScaleScatter<")  # swap_ab transposes the scatter
    assert kernel["capacity_symbol"] == "cutlass::arch::sm120_smem_capacity_bytes"


def test_stage_arithmetic_matches_the_builder(kernel_records: dict) -> None:
    for kernel in kernel_records.values():
        assert kernel["stages_recomputed"] == kernel["builder_pipeline_stages"] == kernel["stages"]
        assert kernel["stages"] == (kernel["capacity_bytes"] - kernel["carveout_bytes"]) // kernel["stage_bytes"]
        assert kernel["kernel_shared_storage_size"] == kernel["kernel_smem_bytes"]
    kernel = kernel_records[FINALIZE_256]
    # A 256x128 tile of packed FP4 (128 B per 256 elements of K) plus one ue4m3 scale per 16 elements
    assert (kernel["stage_a_bytes"], kernel["stage_b_bytes"]) == (256 * 128 // 2, 128 * 128 // 2)
    assert (kernel["stage_sfa_bytes"], kernel["stage_sfb_bytes"]) == (256 * 128 // 16, 128 * 128 // 16)
    assert kernel["stage_bytes"] == 27664


def test_explanation_of_the_kernel_that_should_fit(kernel_records: dict) -> None:
    assert explain(kernel_records[FINALIZE_256], CAPACITY) == (
        "builder: (101376 - 17408 epilogue carveout) // 27664 B/stage = 3 stages, planning 3 x 27664 + 17408 = 100400 B; "
        "real SharedStorage = tensors 100352 + pipelines 224 + scheduler response 128 + tensormaps 896 "
        "+ 800 padding to 1024-B alignment = 102400 B; 1024 B over 101376")
    assert explain(kernel_records[NONE_256], CAPACITY).endswith("= 98304 B; 3072 B spare under 101376")


def test_verdicts_and_tiles(kernel_records: dict) -> None:
    analysed = rows(kernel_records)
    by_tactic = {r["tactic"]: r for r in analysed}
    assert by_tactic[15]["verdict"] == "exceeds" and by_tactic[15]["over_capacity_bytes"] == 1024
    assert by_tactic[3]["verdict"] == "fits" and by_tactic[3]["kernel_smem_bytes"] == 98304
    # static plus dynamic: CUTLASS's kernels have no static __shared__, so the total is the SharedStorage
    assert (by_tactic[15]["static_smem_bytes"], by_tactic[15]["total_smem_bytes"]) == (0, 102400)
    assert by_tactic[16]["verdict"] == "unsupported" and by_tactic[16]["explanation"].startswith("Unsupported tile")
    assert tile_verdicts(analysed) == {"failing_tiles": ["256x128x128"], "fitting_tiles": ["128x128x128"],
                                       "unsupported_tiles": ["128x128x512"]}
    assert failing_tactics(analysed) == {"trtllm::fused_moe::gemm1": [], "trtllm::fused_moe::gemm2": [15]}


def test_exactly_the_limit_fits(kernel_records: dict) -> None:
    at_limit = {k: dict(v) for k, v in kernel_records.items()}
    at_limit[FINALIZE_256]["kernel_smem_bytes"] = CAPACITY
    assert {r["tactic"]: r["verdict"] for r in rows(at_limit)}[15] == "fits"


def test_optin_verdict(kernel_records: dict) -> None:
    by_tactic = {r["tactic"]: r for r in rows(kernel_records, optin=232448)}  # an H200 grants 227 KiB
    assert by_tactic[15]["verdict"] == "exceeds" and by_tactic[15]["verdict_optin"] == "fits"


def test_table(kernel_records: dict) -> None:
    analysed = rows(kernel_records, outputs=("bf16", "f16"))
    assert [r.output_dtype for r in merged_rows([SmemRow.model_validate(r) for r in analysed])] == ["bf16,f16"] * 4
    result = {"status": "ok", "flashinfer": "0.6.3", "arch": "sm120", "dtype": "nvfp4", "capacity_bytes": CAPACITY,
              "capacity_symbol": "cutlass::arch::sm120_smem_capacity_bytes", "optin_limit_bytes": None,
              "rows": analysed, **tile_verdicts(analysed), "failing_tactics": failing_tactics(analysed)}
    out = io.StringIO()
    print_smem_result(result, Console(file=out, width=250, no_color=True))
    text = out.getvalue()
    assert "│ gemm2 │     15 │ 256x128x128 │ CtaShape256x128x64B  │ FINALIZE │ no      │ bf16,f16 │      3 │" in text
    assert "102 400 │ exceeds (+1024)" in text
    assert "failing tiles: 256x128x128" in text
    assert "failing tactics of trtllm::fused_moe::gemm2: 15" in text
    assert "tactic 15 (256x128x128 FINALIZE): builder: (101376 - 17408 epilogue carveout)" in text


def test_the_table_refuses_a_result_whose_row_is_wrong_naming_its_path() -> None:
    result = {"status": "ok", "arch": "sm120", "rows": [{"tactic": 14, "output_dtype": "bf16"}, {"tactic": "15"}]}
    with pytest.raises(ResultError) as caught:
        print_smem_result(result, Console(file=io.StringIO()))
    assert str(caught.value) == ("the static-smem result: field 'rows[1].tactic': Input should be a valid integer (got '15');"
                                 " the static-smem result model (reprokit/step_kinds/static_smem.py) says what each field holds")
    # a ConfigError where a front end meets it: one line and exit 2 (bad input), not a traceback
    assert isinstance(caught.value, ConfigError) and caught.value.exit_code == ExitCode.BAD_INPUT
