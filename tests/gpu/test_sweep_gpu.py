"""A small real sweep on whatever NVIDIA GPU is present; skipped, with the reason, where there is none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: no CUDA device to sweep")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)
pytest.importorskip("triton", reason="triton is not installed: the Triton backend cannot run")
yaml = pytest.importorskip("yaml", reason="PyYAML reads the kit's model file")

from reprokit.workloads.tile_sweep import result as schema  # noqa: E402

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]

FITS_EVERYWHERE = {"block_m": 16, "block_n": 64, "block_k": 128, "num_stages": 4, "num_warps": 4}  # 61440 B
PREFILL = {"block_m": 128, "block_n": 128, "block_k": 64, "num_stages": 3, "num_warps": 8}
TOO_BIG_EVERYWHERE = {"block_m": 128, "block_n": 128, "block_k": 128, "num_stages": 4, "num_warps": 8}  # >= 196608 B


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    params = {
        "model": "glm-5",
        "model_config": yaml.safe_load((REPO / "kits" / "models" / "glm-5.yml").read_text()),
        "parallelism": ["ep8"], "tokens_per_expert": [1, 128],
        "backends": ["boundary", "flashinfer", "triton"], "time_budget_s": 240,
        "tile_configs": [FITS_EVERYWHERE, PREFILL, TOO_BIG_EVERYWHERE],
    }
    (tmp / "params.json").write_text(json.dumps(params))
    proc = subprocess.run([sys.executable, "-m", "reprokit.workloads.tile_sweep", "--params", str(tmp / "params.json"),
                           "--out-dir", str(tmp / "out")], cwd=REPO, capture_output=True, text=True, timeout=600)
    result = json.loads((tmp / "out" / "result.json").read_text())
    return proc, result, (tmp / "out" / "table.txt").read_text()


def test_it_ran_and_conforms(sweep):
    proc, result, table = sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert result["status"] == "ok"
    assert schema.validate(result) == []
    assert result["roofline"]["copy_gbps"] > 100 and result["roofline"]["dense_gemm_tflops"] > 1
    assert "Best tile per problem" in table


def test_every_config_behaves_as_compiled(sweep):
    _, result, _ = sweep
    arch = result["device"]["gpu_arch"]
    rows = [r for r in result["rows"] if r["backend"] == "triton"]
    assert len(rows) == 4 * 3  # ep8 gemm1/gemm2 x 2 token counts x 3 configs
    fits = {c["id"]: c["predicted_fits"][arch] for c in result["configs"]}
    assert fits["m128n128k128s4w8"] is False
    for row in rows:
        if fits[row["config"]]:
            assert row["outcome"] == "ok", row
            assert row["rel_error"] < 1e-2
        else:
            assert row["outcome"] == "failed" and row["error"]["class"] == "out_of_resources", row
    assert result["cross_check"]["disagreements"] == []
    assert "m128n128k128s4w8" in result["cross_check"]["cross_arch"].get("sm120", {"does_not_fit_there": [
        "m128n128k128s4w8"]})["does_not_fit_there"]


def test_boundary_and_flashinfer(sweep):
    _, result, _ = sweep
    boundary = result["backends"]["boundary"]
    assert boundary["launch_at_optin_limit"]["ok"] is True
    assert boundary["launch_past_optin_limit"]["ok"] is False
    assert boundary["optin_bytes"] == result["device"]["smem_optin_bytes"]
    flashinfer = result["backends"]["flashinfer"]
    if result["device"]["capability"][0] not in (10, 12):
        assert flashinfer["status"] == "skipped" and result["device"]["gpu_arch"] in flashinfer["reason"]
