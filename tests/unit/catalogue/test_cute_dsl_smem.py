"""cute-dsl-smem: a CuTe-DSL kernel's own host code (stage formula, @cute.struct storage) run on tile shapes."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.cute_dsl_smem import host_model
from reprokit.workloads.cute_dsl_smem.workload import run
from reprokit.workloads.triton_smem.kernels import pinned_wheel

REPO = Path(__file__).resolve().parents[3]
KIT = REPO / "kits" / "b12x-moe-smem.yml"

# A package in the shape of FlashInfer's b12x: a kernel class importing a dense class of its own package for the
# stage formula, a struct written inside a method, aligned buffers.
HELPER = '''
import cutlass.cute as cute

class Dense:
    @staticmethod
    def _compute_stages(tile, a_dtype, capacity):
        per_stage = cute.size(cute.slice_(tile, (None, 0, None))) * a_dtype.width // 8
        return min(4, (capacity - 1024) // (2 * per_stage))

Alias = Dense
'''
KERNEL = '''
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from demo.helper import Alias as DenseKernel

WARPS = 4

class Kernel:
    def __init__(self, tile_m, tile_k=128):
        self._dense = DenseKernel
        self.tile = (tile_m, 128, tile_k)
        self.capacity = utils.get_smem_capacity_in_bytes("sm_120")
        self.barrier = cute.nvgpu.NamedBarrier(barrier_id=1)

    def _setup(self, k_tiles):
        import cutlass.utils.blackwell_helpers as helpers
        self.mma = helpers.make_tiled_mma(self.tile)
        self.ab_stage = self._dense._compute_stages(self.tile, self.a_dtype, self.smem_capacity)
        while self.ab_stage > 1 and k_tiles % self.ab_stage != 0:
            self.ab_stage -= 1
        self.a_staged = cute.tile_to_shape(self.mma, cute.append(cute.slice_(self.tile, (None, 0, None)), self.ab_stage))

    def kernel(self, a_staged):
        @cute.struct
        class Storage:
            flags: cute.struct.MemRange[cutlass.Int32, WARPS + 1]
            barriers: cute.struct.MemRange[cutlass.Int64, self.ab_stage * 2]
            sA: cute.struct.Align[cute.struct.MemRange[self.a_dtype, cute.cosize(a_staged)], 1024]
'''


def demo_wheel(tmp_path: Path) -> Path:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/helper.py", HELPER)
        zf.writestr("demo/kernel.py", KERNEL)
    return path


def params(wheel: Path, **over) -> dict:
    return {"package": "demo", "version": "1.0", "wheel": str(wheel), "source": "demo/kernel.py", "kernel": "Kernel",
            "setup": "_setup", "struct": "Storage", "attributes": {"a_dtype": "bfloat16"},
            "bind": {"a_staged": "a_staged"}, "archs": ["sm120", "sm90"],
            "cases": [{"name": "k24", "init": {"tile_m": 128}, "setup_args": {"k_tiles": 24}},
                      {"name": "k16", "init": {"tile_m": 128}, "setup_args": {"k_tiles": 16}}], **over}


def test_the_kernels_own_formula_and_struct_on_shapes(tmp_path):
    result = run(params(demo_wheel(tmp_path)), tmp_path / "out")
    # sm120: (101376 - 1024) // (2 * 128*128*2) = 1 stage; sm90: (232448 - 1024) // 65536 = 3, and 3 divides 24
    assert result["by_case"]["k24"]["sm120"]["stages"] == {"ab_stage": 1}
    assert result["by_case"]["k24"]["sm90"]["stages"] == {"ab_stage": 3}
    assert result["by_case"]["k16"]["sm90"]["stages"] == {"ab_stage": 2}  # 3 does not divide 16
    fields = result["by_case"]["k24"]["sm90"]["fields"]
    assert [(f["name"], f["offset"], f["bytes"]) for f in fields] == [
        ("flags", 0, 20), ("barriers", 24, 48), ("sA", 1024, 3 * 128 * 128 * 2)]
    assert result["by_case"]["k24"]["sm90"]["shared_bytes"] == 1024 + 98304
    assert result["overflowing"] == {"sm120": [], "sm90": []}


def test_a_struct_the_model_cannot_size_is_named(tmp_path):
    with pytest.raises(WorkloadError) as caught:
        run(params(demo_wheel(tmp_path), bind={}), tmp_path / "out")
    assert caught.value.code == Exit.BAD_PARAMS
    assert str(caught.value).startswith("struct Storage.sA: cannot size")


def test_a_case_with_an_unknown_key_is_refused(tmp_path):
    bad = params(demo_wheel(tmp_path), cases=[{"name": "x", "hidden": 1}])
    with pytest.raises(WorkloadError) as caught:
        run(bad, tmp_path / "out")
    assert str(caught.value) == ("cases[0] (x): unknown keys ['hidden']; a case takes init, model, name, setup_args,"
                                 " struct, why")


def test_shape_calls_of_the_model():
    assert host_model.slice_((128, 64, 256), (None, 0, None)) == (128, 256)
    assert host_model.size(((2, 3), 4)) == 24
    assert host_model.Utils.get_smem_capacity_in_bytes("sm_120a") == 101376


def _kit_params(step: int, version: str) -> dict:
    import yaml

    with_ = yaml.safe_load(KIT.read_text())["steps"][step]["with"]
    return {**with_, "version": version}


@pytest.mark.parametrize(("version", "bytes_122b", "stages"), [("0.6.13", 118784, 3), ("0.6.17", 91136, 2)])
def test_flashinfer_b12x_dynamic_kernel_from_the_wheel(tmp_path, version, bytes_122b, stages):
    """flashinfer #3807's 118784 B from the 0.6.13 wheel's own code; the 0.6.17 wheel's fix gives 2 stages."""
    try:
        pinned_wheel("flashinfer-python", version, None)
    except WorkloadError as exc:
        pytest.skip(f"flashinfer-python {version}'s wheel: {exc}")
    result = run(_kit_params(0, version), tmp_path / "out")
    case = result["by_case"]["qwen35-122b-a10b"]["sm120"]
    assert (case["shared_bytes"], case["stages"]["ab_stage"]) == (bytes_122b, stages)
    assert result["by_case"]["qwen36-35b-a3b"]["sm120"]["shared_bytes"] == 91136
    assert json.dumps(result)  # the result is data
