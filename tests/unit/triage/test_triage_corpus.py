"""Triage on real logs: every verbatim excerpt of tests/fixtures/real/ against the expert reading in its sidecar."""

from pathlib import Path

import pytest

from reprokit.triage import triage_files
from reprokit.triage.corpus import compare, load_corpus

CORPUS = load_corpus(Path(__file__).resolve().parents[2] / "fixtures" / "real")


def test_the_corpus_covers_what_the_issue_asks_for():
    assert len(CORPUS) >= 30
    repositories = {e.sidecar["source"]["repository"] for e in CORPUS}
    assert {"sgl-project/sglang", "vllm-project/vllm", "flashinfer-ai/flashinfer", "NVIDIA/TensorRT-LLM",
            "NVIDIA/cutlass"} <= repositories
    verdicts = {e.expected["verdict"] for e in CORPUS}
    assert verdicts == {"READY", "NOT_READY", "FATAL", "INCONCLUSIVE"}
    for excerpt in CORPUS:
        source = excerpt.sidecar["source"]
        assert source["url"] == f"https://github.com/{source['repository']}/" \
            f"{'pull' if source['kind'] == 'pull request' else 'issues'}/{source['number']}"
        line = excerpt.expected["evidence_line"]
        if line is not None:  # the sidecar quotes the very line it cites
            text = excerpt.log.read_bytes().split(b"\n")[line - 1].decode()
            assert text.startswith(excerpt.expected["evidence_text"]), excerpt.name


@pytest.mark.parametrize("excerpt", CORPUS, ids=lambda e: e.name)
def test_triage_reads_the_real_log_as_an_expert_does(excerpt):
    report = triage_files([excerpt.log]).to_json()
    assert compare(excerpt.expected, report) == {}
    evidence = report["evidence"]
    if excerpt.expected["evidence_line"] is None:
        assert evidence is None
    else:
        assert evidence["location"] == f"{excerpt.log}:{excerpt.expected['evidence_line']}"
