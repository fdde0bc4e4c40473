"""invoke report --upstream on a real run record (the H200 ep8-crash run in evidence/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reprokit.errors import ConfigError
from reprokit.fix.upstream_report import upstream_report
from reprokit.records.run_dir import RunRecord

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "evidence" / "h200" / "20261129T095816Z-ep8-crash-local-8aaa"


def test_report_of_the_h200_record() -> None:
    text = upstream_report(RUN)
    lines = text.splitlines()
    assert lines[0] == ("# [SM120] CUTLASS fused-MoE tactics gemm2 14, 15 cannot start: SharedStorage 102400 B > 101376 B "
                        "(FlashInfer 0.6.3)")
    assert ("This record ran on sm90: everything said here about sm120 is the static analysis of the wheel (nvcc, no "
            "GPU of that arch), not an observation.") in lines
    assert "- GPU: 1 x NVIDIA H200 (sm90, 132 SMs), opt-in shared memory per block 232448 B" in lines
    assert [line for line in lines if line.startswith("### tactic")] == [
        "### tactic 14 (trtllm::fused_moe::gemm2): tile 128x256x128 (CtaShape128x256x64B), FINALIZE, swap_ab no, 3 stages, "
        "output bf16, f16",
        "### tactic 15 (trtllm::fused_moe::gemm2): tile 256x128x128 (CtaShape256x128x64B), FINALIZE, swap_ab no, 3 stages, "
        "output bf16, f16"]
    start = lines.index("| member | bytes |")
    assert lines[start + 2:start + 11] == ["| tensors | 100352 |", "| pipelines | 224 |", "| scheduler response | 128 |",
                                           "| tensormaps | 896 |", "| padding to 1024-B alignment | 800 |",
                                           "| **SharedStorage** | **102400** |", "| limit | 101376 |", "| over by | 1024 |", ""]
    assert "invoke smem --flashinfer 0.6.3 --arch sm120     # the table above, from the wheel's own sources" in lines
    assert any(line.startswith("flashinfer 0.6.3 on sm120: 2 of 24 nvfp4 tactics cannot run") and
               "use sglang-disable-autotune" in line for line in lines)
    assert '    "MoE grouped GEMM requires %d bytes shared memory but device supports %d", kernel_smem_bytes, smem_optin_bytes);' in lines


def test_a_record_without_the_analysis_is_refused(tmp_path: Path) -> None:
    record = RunRecord.create(tmp_path, "r1", kit={"name": "ep8-crash"}, pins={"flashinfer-python": "0.6.3"})
    with pytest.raises(ConfigError, match=r"its static-smem step has no result.*invoke smem --flashinfer 0.6.3"):
        upstream_report(record.dir)
    (tmp_path / "not-a-run").mkdir()
    with pytest.raises(ConfigError, match=r"not-a-run/manifest.json: no manifest"):
        upstream_report(tmp_path / "not-a-run")


def test_a_wrong_field_of_a_kernel_row_is_one_line_naming_the_file_and_the_path(tmp_path: Path) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    path = run / "steps" / "static-smem" / "result.json"
    result = json.loads(path.read_text())
    result["rows"][3]["kernel_smem_bytes"] = "102400"
    path.write_text(json.dumps(result))
    with pytest.raises(ConfigError) as caught:
        upstream_report(run)
    assert str(caught.value) == (
        f"{path}: field 'rows[3].kernel_smem_bytes': Input should be a valid integer (got '102400'); the static-smem"
        " result model (reprokit/step_kinds/static_smem.py) says what each field holds")
