"""vLLM's options and environment variables, read from its wheel (reprokit/upstream/vllm_args.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.config.kit import load_kit_file
from reprokit.errors import HostError
from reprokit.upstream.vllm_args import (
    bench_options,
    env_problems,
    environment_variables,
    field_kinds,
    kit_problems,
    serve_options,
)

REPO = Path(__file__).resolve().parents[3]
VERSION = "0.27.0"

FIELDS = '''
from typing import Literal
Backend = Literal["auto", "fast"]

class EngineArgs:
    enable_thing: bool = False
    backend: Backend = "auto"
    mode: Literal["a", "b"] | None = None
    name: str | None = None
    optional_flag: bool | str | None = None
'''


def test_field_kinds_follow_get_kwargs():
    kinds = field_kinds(FIELDS, ("EngineArgs",), {"Backend": ("auto", "fast")})
    assert kinds == {"enable_thing": ("bool", None), "backend": ("value", ("auto", "fast")),
                     "mode": ("value", ("a", "b")), "name": ("value", None), "optional_flag": ("value", None)}


@pytest.fixture(scope="module")
def tables():
    try:
        return serve_options(VERSION), bench_options(VERSION), environment_variables(VERSION)
    except HostError as exc:
        pytest.skip(f"vllm {VERSION}'s wheel: {exc}")


def test_serve_options_of_the_wheel(tables):
    serve, _, _ = tables
    assert serve.problems(["-tp", "8", "--enable-expert-parallel", "--no-enable-flashinfer-autotune",
                           "--moe-backend", "flashinfer_cutlass", "--port", "8000"]) == []
    assert serve.problems(["--moe-backend", "flashinfer-cutlass-typo"])[0].startswith(
        "--moe-backend 'flashinfer-cutlass-typo' is not one of vllm 0.27.0")
    assert serve.problems(["--enable-expert-parallel=1"]) == [
        f"--enable-expert-parallel of {serve.origin} takes no value (got '--enable-expert-parallel=1')"]
    assert serve.problems(["--disable-flashinfer-autotune"]) == [
        f"--disable-flashinfer-autotune is not an option of {serve.origin}"]  # sglang's flag, not vLLM's


def test_bench_serve_options_of_the_wheel(tables):
    _, bench, _ = tables
    assert bench.problems(["--dataset-name", "random", "--save-result", "--result-dir", "d"]) == []
    assert bench.problems(["--dataset-name", "random-ids"])[0].startswith("--dataset-name 'random-ids' is not one of")


def test_vllm_0_27_0_no_longer_reads_the_fp4_variable(tables):
    _, _, (origin, known) = tables
    assert "VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS" in known  # vLLM PR 48268
    assert env_problems({"VLLM_USE_FLASHINFER_MOE_FP4": "1", "FLASHINFER_LOGGING_LEVEL": "debug"}, known, origin) == [
        "VLLM_USE_FLASHINFER_MOE_FP4 is not an environment variable of vllm 0.27.0 vllm/envs.py: vLLM warns 'Unknown"
        " vLLM environment variable detected' and never reads it"]


def test_kits_check_holds_a_kit_to_the_pinned_vllm(tables, tmp_path):
    text = (REPO / "kits" / "ep8-crash-vllm.yml").read_text().replace(
        "        FLASHINFER_LOGGING_LEVEL: debug", '        VLLM_USE_FLASHINFER_MOE_FP4: "1"\n        FLASHINFER_LOGGING_LEVEL: debug')
    path = tmp_path / "ep8-crash-vllm.yml"
    path.write_text(text)
    problems, checked = kit_problems(load_kit_file(path))
    assert problems == ["step 'serve': env VLLM_USE_FLASHINFER_MOE_FP4 is not an environment variable of vllm 0.27.0"
                        " vllm/envs.py: vLLM warns 'Unknown vLLM environment variable detected' and never reads it"]
    assert checked[0].startswith("step 'serve': 7 server flags against vllm 0.27.0")
    problems, _ = kit_problems(load_kit_file(REPO / "kits" / "ep8-crash-vllm-fixed.yml"))
    assert problems == []
