"""`invoke new-kit NAME --from-issue FILE` on three real threads saved as files (tests/fixtures/issues/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from reprokit.config.kit import load_kit_file
from reprokit.errors import ConfigError
from reprokit.kits.new_kit import new_kit
from reprokit.upstream.issue_reader import read_issue

REPO = Path(__file__).resolve().parents[3]
ISSUES = REPO / "tests" / "fixtures" / "issues"


def test_readers_on_the_b12x_thread():
    facts = read_issue((ISSUES / "flashinfer-3807-b12x-moe-smem.md").read_text())
    assert (facts.threads, facts.arch, facts.kind) == (["flashinfer-ai/flashinfer#3807"], "sm120", "cute-dsl-smem")
    assert (facts.required_bytes, facts.limit_bytes) == ([118784], [101376])
    assert facts.kernels == ["moe_dynamic_kernel", "MoEDynamicKernel"]
    assert facts.quote.endswith("Allocated: 118784 bytes. Max: 101376 bytes.")


def test_readers_on_the_matmul_ogs_thread():
    facts = read_issue((ISSUES / "triton-8182-matmul-ogs.md").read_text())
    assert (facts.threads, facts.arch, facts.kind) == (["triton-lang/triton#8182"], None, "triton-smem")
    assert (facts.required_bytes, facts.limit_bytes) == ([131072], [101376])
    assert facts.versions == {"triton": "3.5.0", "triton-kernels": "1.0.0", "torch": "2.8.0"}  # pip list rows
    assert facts.kernels[0] == "matmul_ogs"


def test_readers_on_the_sm89_fallback_thread():
    facts = read_issue((ISSUES / "flashinfer-3031-sm89-fp8-moe-tactics.md").read_text())
    assert (facts.arch, facts.kind, facts.required_bytes) == ("sm120", "static-smem", [])
    assert facts.versions == {"vllm": "0.17.0", "torch": "2.10.0"}  # "0.6.x" is not a version


@pytest.mark.parametrize(("issue", "kind", "pins"), [
    ("flashinfer-3807-b12x-moe-smem.md", "cute-dsl-smem", {}),
    ("triton-8182-matmul-ogs.md", "triton-smem", {"triton": "3.5.0", "triton-kernels": "1.0.0", "torch": "2.8.0"}),
    ("flashinfer-3031-sm89-fp8-moe-tactics.md", "static-smem",
     {"vllm": "0.17.0", "torch": "2.10.0", "flashinfer-python": "0.6.3"}),  # flashinfer: the other kits' pin
])
def test_the_skeleton_loads_and_carries_the_issue(tmp_path, issue, kind, pins):
    kits = tmp_path / "kits"
    shutil.copytree(REPO / "kits", kits)
    path = new_kit("new-case", None, str(kits), [], str(ISSUES / issue))
    kit = load_kit_file(path)
    assert kit.steps[0].uses == kind and dict(kit.pins) == pins
    facts = read_issue((ISSUES / issue).read_text())
    description = yaml.safe_load(path.read_text())["description"]
    assert f"thread {facts.threads[0]}" in description
    for figure in facts.required_bytes:
        assert f"#   equals: {figure}" in path.read_text()


def test_an_unreadable_issue_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as caught:
        new_kit("x", None, str(tmp_path), [], str(tmp_path / "missing.md"))
    assert str(caught.value) == (f"--from-issue {tmp_path / 'missing.md'}: cannot read the file (No such file or"
                                 " directory); save the issue's text there")
    assert list(tmp_path.iterdir()) == []
