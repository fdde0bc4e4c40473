"""sglang's options, from add_argument calls and from the dataclass fields newer releases declare them with."""

from __future__ import annotations

import pytest

from reprokit.errors import HostError
from reprokit.upstream.args import field_options, server_options

FIELDS = '''
from typing import Annotated as A, List, Literal, Optional
from sglang.srt.arg_groups.arg_utils import Arg

class KernelArgs:
    disable_flashinfer_autotune: A[bool, "Disable FlashInfer autotuning."] = False
    flashinfer_autotune_skip_ops: A[Optional[List[str]], Arg(help="ops to skip", nargs="+")] = None
    tp_size: A[int, Arg(help="tensor parallel", cli_name="--tensor-parallel-size", aliases=["--tp-size", "--tp"])] = 1
    attention_backend: A[Optional[Literal["fa3", "flashinfer"]], "the backend"] = None
    internal_state: A[int, Arg(help="not on the command line", no_cli=True)] = 0
    plain: int = 3
'''


def test_fields_become_options_as_arg_utils_makes_them() -> None:
    options = field_options(FIELDS)
    assert sorted(options) == ["--attention-backend", "--disable-flashinfer-autotune", "--flashinfer-autotune-skip-ops",
                               "--tensor-parallel-size", "--tp", "--tp-size"]
    assert options["--disable-flashinfer-autotune"].takes_value is False
    skip = options["--flashinfer-autotune-skip-ops"]
    assert (skip.takes_value, skip.value_optional, skip.nargs) == (True, False, "+")
    assert options["--tp"].strings == ("--tensor-parallel-size", "--tp-size", "--tp")
    assert options["--attention-backend"].choices == ("fa3", "flashinfer")


@pytest.fixture(scope="module")
def tables():
    try:
        return {v: server_options(v) for v in ("0.5.9", "0.5.23")}
    except HostError as exc:
        pytest.skip(f"sglang wheels: {exc}")


def test_skip_ops_flag_exists_only_in_the_newer_release(tables) -> None:
    flag = ["--flashinfer-autotune-skip-ops", "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"]
    assert tables["0.5.9"].problems(flag) == [
        "--flashinfer-autotune-skip-ops is not an option of sglang 0.5.9 sglang/srt/server_args.py"]
    assert tables["0.5.23"].problems(flag) == []
    assert tables["0.5.23"].origin == "sglang 0.5.23 sglang/srt/server_args.py + sglang/srt/arg_groups/fields/*.py"
    for table in tables.values():
        assert table.problems(["--disable-flashinfer-autotune"]) == []
        assert table.problems(["--disable-flashinfer-autotune=1"]) == [
            f"--disable-flashinfer-autotune of {table.origin} takes no value (got '--disable-flashinfer-autotune=1')"]


def test_kits_check_reads_the_dataclass_fields_of_newer_releases(tables) -> None:
    """`invoke kits --check` (kit_flag_problems) accepts a 0.5.23 field option and refuses it under 0.5.9."""
    from pathlib import Path

    from reprokit.config.kit import load_kit_file
    from reprokit.upstream.args import kit_flag_problems

    kit = load_kit_file(Path(__file__).resolve().parents[3] / "kits" / "ep8-crash.yml")
    skip_ops = ["--flashinfer-autotune-skip-ops", "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"]

    def pinned(version: str):
        steps = [s.model_copy(update={"with_": {**s.with_, "extra_args": skip_ops}}) if s.uses == "serve" else s
                 for s in kit.steps]
        return kit.model_copy(update={"steps": steps, "pins": {**kit.pins, "sglang": version}})

    problems, checked = kit_flag_problems(pinned("0.5.23"))
    assert problems == []
    # 0.5.23's bench_serving.py is a deprecated shim: `from sglang.benchmark.serving import *`
    assert checked == ["step 'serve': 10 server flags against sglang 0.5.23 sglang/srt/server_args.py"
                       " + sglang/srt/arg_groups/fields/*.py, 9 benchmark flags against sglang 0.5.23"
                       " sglang/bench_serving.py -> sglang/benchmark/serving.py"]
    assert kit_flag_problems(pinned("0.5.9"))[0] == [
        "step 'serve': sglang.launch_server --flashinfer-autotune-skip-ops is not an option of sglang 0.5.9"
        " sglang/srt/server_args.py"]
