"""The options an upstream release declares, read from its own wheel (reprokit/upstream/args.py)."""

from __future__ import annotations

import pytest

from reprokit.errors import HostError
from reprokit.upstream.args import BENCH_SERVING, SERVER_ARGS, parse_options, upstream_options
from reprokit.workloads.static_smem.wheel import default_cache_dir

SOURCE = '''
import argparse
MODES = ["a", "b"]

class Quiet(argparse.Action):
    def __init__(self, option_strings, dest, nargs=0, **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

def add(parser):
    parser.add_argument("--tensor-parallel-size", "--tp-size", type=int)
    parser.add_argument("--mode", choices=MODES)
    parser.add_argument("--level", choices=["x", "y"])
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--old", action=Quiet)
    parser.add_argument("--tags", nargs="*")
    parser.add_argument("--port-a", type=int)
    parser.add_argument("--port-b", type=int)
    parser.add_argument("positional")
'''


def test_option_strings_choices_and_valueless_actions():
    table = parse_options(SOURCE, "demo 1.0 demo.py")
    assert sorted(table.options) == ["--fast", "--level", "--mode", "--old", "--port-a", "--port-b", "--tags",
                                     "--tensor-parallel-size", "--tp-size"]
    assert table.options["--tp-size"] is table.options["--tensor-parallel-size"]
    assert table.options["--mode"].choices == ("a", "b")
    assert table.options["--level"].choices == ("x", "y")
    assert table.options["--old"].takes_value is False and table.options["--fast"].takes_value is False
    assert table.options["--tags"].value_optional is True


def test_argv_checked_as_argparse_would():
    table = parse_options(SOURCE, "demo 1.0 demo.py")
    assert table.problems(["--tp-size", "8", "--mode=b", "--fast", "--old", "--tags", "--tensor", "2"]) == []
    assert table.problems(["--bogus", "--mode", "c", "--fast=1", "--port", "1", "--level"]) == [
        "--bogus is not an option of demo 1.0 demo.py",
        "--mode 'c' is not one of demo 1.0 demo.py's choices: a, b",
        "--fast of demo 1.0 demo.py takes no value (got '--fast=1')",
        "--port is ambiguous in demo 1.0 demo.py (could be --port-a, --port-b)",
        "--level of demo 1.0 demo.py needs a value",
    ]


@pytest.fixture(scope="module")
def sglang_059():
    try:
        return (upstream_options("sglang", "0.5.9", SERVER_ARGS, default_cache_dir()),
                upstream_options("sglang", "0.5.9", BENCH_SERVING, default_cache_dir()))
    except HostError as exc:
        pytest.skip(f"the sglang 0.5.9 wheel is not in the cache and the package index is unreachable: {exc}")


def test_sglang_059_server_and_bench_options_from_its_wheel(sglang_059):
    server, bench = sglang_059
    assert len({o.strings for o in server.options.values()}) == 331  # add_argument calls in server_args.py
    assert len({o.strings for o in bench.options.values()}) == 67
    assert "flashinfer_cutlass" in server.options["--moe-runner-backend"].choices
    assert "modelopt_fp4" in server.options["--quantization"].choices
    assert server.options["--hybrid-kvcache-ratio"].takes_value is False  # sglang's DeprecatedAction, nargs=0
    assert bench.options["--dataset-name"].choices[:5] == ("sharegpt", "custom", "openai", "random", "random-ids")
    # flags of other releases are refused as 0.5.9's argparse refuses them
    assert server.problems(["--enable-ep-moe", "--flashinfer-autotune-skip-ops", "x"]) == [
        "--enable-ep-moe is not an option of sglang 0.5.9 sglang/srt/server_args.py",
        "--flashinfer-autotune-skip-ops is not an option of sglang 0.5.9 sglang/srt/server_args.py"]
    assert server.problems(["--disable-flashinfer-autotune", "--tp", "8", "--ep-size", "8"]) == []
