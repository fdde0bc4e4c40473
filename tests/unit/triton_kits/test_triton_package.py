"""A kernel imported with its package (triton_kernels' _matmul_ogs): the package written out of the wheel, its
modules named, torch stood in for where the host has none, and the triton-matmul-ogs kit's figures."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
import yaml

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.triton_smem import kernels
from tests.unit.triton_kits.test_triton_smem import run_workload

REPO = Path(__file__).resolve().parents[3]
ROOT = "vllm/third_party/triton_kernels"


def test_a_source_under_the_root_is_a_module_of_the_imported_name():
    assert kernels.module_name(ROOT, "triton_kernels", f"{ROOT}/matmul_ogs_details/_matmul_ogs.py") == \
        "triton_kernels.matmul_ogs_details._matmul_ogs"
    assert kernels.module_name(ROOT + "/", "triton_kernels", f"{ROOT}/swiglu.py") == "triton_kernels.swiglu"
    assert kernels.module_name(ROOT, "triton_kernels", f"{ROOT}/__init__.py") == "triton_kernels"
    with pytest.raises(WorkloadError) as caught:
        kernels.module_name(ROOT, "triton_kernels", "vllm/model_executor/layers/fused_moe/fused_moe.py")
    assert (caught.value.code, str(caught.value)) == (
        Exit.BAD_PARAMS, f"`source` vllm/model_executor/layers/fused_moe/fused_moe.py is not a .py file under"
                         f" `package_root` {ROOT}")


def _wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, textwrap.dedent(text))
    return path


def test_the_package_is_written_whole_under_its_import_name(tmp_path):
    wheel = _wheel(tmp_path, {"demo/third_party/kern/__init__.py": "", "demo/third_party/kern/sub/k.py": "X = 1\n",
                              "demo/other.py": "Y = 2\n"})
    written = kernels.extract_package(wheel, "demo/third_party/kern", "kern", tmp_path / "pkg")
    assert written == tmp_path / "pkg" / "kern"
    assert sorted(str(p.relative_to(tmp_path / "pkg")) for p in (tmp_path / "pkg").rglob("*.py")) == [
        "kern/__init__.py", "kern/sub/k.py"]
    with pytest.raises(WorkloadError) as caught:
        kernels.extract_package(wheel, "demo/no_such", "kern", tmp_path / "pkg2")
    assert (caught.value.code, str(caught.value)) == (
        Exit.BAD_PARAMS, "demo-1.0-py3-none-any.whl has no files under demo/no_such/; check the step's `package_root`")


def _in_a_fresh_interpreter(script: str) -> dict:
    """Run ``script`` (it prints one JSON line) in its own Python: the stand-in must not reach this test process."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed: the stand-in is not used")
def test_without_torch_the_stand_in_satisfies_what_an_import_reads():
    seen = _in_a_fresh_interpreter("""
        import json
        from reprokit.workloads.triton_smem import torch_standin
        used = torch_standin.ensure_importable()
        import torch
        import torch.nn.functional as F
        from torch import Tensor

        class Module(torch.nn.Module):  # a base class
            pass

        annotation = torch.dtype | None  # a PEP 604 annotation, evaluated at import
        print(json.dumps({"used": used, "again": torch_standin.ensure_importable(), "pad": repr(F.pad),
                          "tensor": repr(Tensor), "annotation": repr(annotation), "base": Module.__mro__[1].__name__}))
    """)
    assert seen == {"used": "stand-in", "again": "stand-in", "pad": "<torch stand-in torch.nn.functional.pad>",
                    "tensor": "<torch stand-in torch.Tensor>", "annotation": "<torch stand-in torch.dtype>",
                    "base": "object"}


def test_the_package_module_is_imported_once_and_its_errors_are_named(tmp_path):
    wheel = _wheel(tmp_path, {
        "demo/kern/__init__.py": "",
        "demo/kern/ops.py": "import torch\nfrom kern.helpers import HELP\nkernel = ('kernel', HELP)\n",
        "demo/kern/helpers.py": "HELP = 'help'\n",
        "demo/kern/broken.py": "raise RuntimeError('needs a GPU at import')\n"})
    seen = _in_a_fresh_interpreter(f"""
        import json
        from pathlib import Path
        from reprokit.workloads.contract import WorkloadError
        from reprokit.workloads.triton_smem.workload import _package_module

        def attempt(**params):
            out = Path({str(tmp_path)!r}) / "out" / str(len(params))
            try:
                return list(_package_module({{"package_root": "demo/kern", "kernel": "kernel", **params}},
                                             Path({str(wheel)!r}), out / "pkg", out))
            except WorkloadError as exc:
                return [int(exc.code), str(exc)]
        print(json.dumps({{
            "ok": attempt(import_as="kern", source="demo/kern/ops.py"),
            "kept": sorted(p.name for p in (Path({str(tmp_path)!r}) / "out").rglob("kernels/*")),
            "no_name": attempt(source="demo/kern/ops.py"),
            "no_kernel": attempt(import_as="kern", source="demo/kern/helpers.py"),
            "broken": attempt(import_as="kern", source="demo/kern/broken.py", jobs=1),
        }}))
    """)
    torch_used = "stand-in" if importlib.util.find_spec("torch") is None else seen["ok"][1]
    assert seen == {
        "ok": ["kern.ops", torch_used],
        "kept": ["ops.py"],
        "no_name": [2, "`package_root` needs `import_as`, the name its modules import it by (e.g. triton_kernels)"],
        "no_kernel": [2, "demo/kern/helpers.py has no kernel"],
        "broken": [int(Exit.MISSING_DEPENDENCY), "importing kern.broken from demo-1.0-py3-none-any.whl:demo/kern failed: RuntimeError: needs a GPU"
                      " at import"],
    }


def _triton_is(version: str) -> bool:
    if importlib.util.find_spec("triton") is None:
        return False
    import triton

    return triton.__version__ == version


VLLM_WHEEL = wheels.default_cache_dir() / "wheels" / wheels.wheel_file_name("0.12.0", "vllm")


@pytest.mark.skipif(not _triton_is("3.5.0"), reason="the kit's figures are Triton 3.5.0's (its pin); see"
                    " evidence/catalogue/README.md for the cross-compile")
@pytest.mark.skipif(not VLLM_WHEEL.is_file(), reason=f"vLLM 0.12.0's wheel (466 MB) is not in {VLLM_WHEEL.parent}")
def test_the_matmul_ogs_kit_compiles_to_the_thread_figure(tmp_path):
    kit = yaml.safe_load((REPO / "kits" / "triton-matmul-ogs.yml").read_text())
    params = {**kit["steps"][0]["with"], "version": "0.12.0", "wheel": str(VLLM_WHEEL), "jobs": 2}
    code, result = run_workload(params, tmp_path / "ogs")
    assert code == 0, result.get("error")
    assert {name: {arch: row["shared_bytes"] for arch, row in rows.items()} for name, rows in result["by_case"].items()} == {
        "sm120-opt-flags": {"sm120": 131072, "sm90": 10240}, "hopper-opt-flags": {"sm120": 130048, "sm90": 68608},
        "sm120-block-k-128": {"sm120": 87040, "sm90": 25600}}
    assert result["overflowing"] == {"sm120": ["sm120-opt-flags", "hopper-opt-flags"], "sm90": []}
