"""Each step kind's declared result keys are the keys its workload writes: `kits --check` holds paths to the truth."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from reprokit.step_kinds import STEP_KINDS
from reprokit.triage import triage_files

REPO = Path(__file__).resolve().parents[3]
CONTRACT = {"workload", "schema_version", "status", "error"}
RECORDS = {  # a real record of each kind, written by the kits' own command
    "smem-probe": "evidence/h200/20261129T095816Z-ep8-crash-local-8aaa/steps/probe/result.json",
    "static-smem": "evidence/h200/20261129T095816Z-ep8-crash-local-8aaa/steps/static-smem/result.json",
    "tile-sweep": "evidence/h200/20261129T095640Z-tile-sweep-local-f9a8/steps/sweep/result.json",
    "triton-moe-configs": next((REPO / "evidence/triton-cross-compile").glob("*-triton-moe-configs-*/steps/compile/result.json")),
    "triton-smem": [  # a kernel cut out of one file, and one imported with its package (package_root)
        next((REPO / "evidence/triton-cross-compile").glob("*-triton-mla-decode-*/steps/compile/result.json")),
        next((REPO / "evidence/catalogue").glob("*-triton-matmul-ogs-*/steps/compile/result.json"))],
    "cutlass-tile-list": next((REPO / "evidence/catalogue").glob("*-mxfp8-gemm-tiles-*/steps/tiles-before-fix/result.json")),
    "cute-dsl-smem": next((REPO / "evidence/catalogue").glob("*-b12x-moe-smem-*/steps/dynamic-kernel/result.json")),
    "tilelang-smem": next((REPO / "evidence/catalogue").glob("*-tilelang-prepare-h-*/steps/hopper-prepare-h/result.json")),
}


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_declared_keys_are_the_keys_of_a_real_result(kind):
    records = RECORDS[kind] if isinstance(RECORDS[kind], list) else [RECORDS[kind]]
    written = set().union(*(json.loads((REPO / record).read_text()) for record in records)) - CONTRACT
    assert set(STEP_KINDS[kind].result_keys) == written


def test_serve_declares_the_keys_of_its_workloads_result():
    tree = ast.parse((REPO / "reprokit/workloads/serve.py").read_text())  # session(): one result for sglang and vLLM
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "session")
    returned = [n.value for n in ast.walk(run) if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)][-1]
    assert STEP_KINDS["serve"].result_keys == tuple(k.value for k in returned.keys)


def test_triage_declares_the_keys_of_the_control_step():
    report = triage_files([REPO / "tests/fixtures/logs/sglang-ep8-warmup-fatal.log"], flashinfer_version="0.6.3")
    assert STEP_KINDS["triage"].result_keys == ("logs", *report.to_json())
