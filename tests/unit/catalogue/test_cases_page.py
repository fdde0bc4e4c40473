"""docs/cases.md is the catalogue as generated now; every kit has its facts in reprokit/data/cases.json."""

from __future__ import annotations

from pathlib import Path

from reprokit.config.kit import kit_names
from reprokit.kits import catalogue

REPO = Path(__file__).resolve().parents[3]


def test_docs_cases_md_is_current():
    page = (REPO / "docs" / "cases.md").read_text(encoding="utf-8")
    assert page == catalogue.markdown(catalogue.cases()), (
        "docs/cases.md is stale: run invoke kits --cases docs/cases.md")


def test_every_kit_is_catalogued_and_names_an_expectation_it_has():
    facts = catalogue.case_facts()
    assert sorted(facts) == kit_names(REPO / "kits")
    rows = catalogue.cases()
    assert len(rows) == len(facts) == len(kit_names(REPO / "kits"))
    assert not [r.kit for r in rows if r.predicted.startswith("(no expectation")]


def test_the_measured_column_reads_the_newest_record():
    row = next(r for r in catalogue.cases() if r.kit == "b12x-moe-smem")
    assert row.predicted == "`by_case.qwen35-122b-a10b.sm120.shared_bytes` equals 118784"
    assert row.observed.startswith("118784 (PASS, evidence/catalogue/")


def test_the_matmul_ogs_row_reads_its_catalogue_record():
    row = next(r for r in catalogue.cases() if r.kit == "triton-matmul-ogs")
    assert row.predicted == "`by_case.sm120-opt-flags.sm120.shared_bytes` equals 131072"
    assert row.observed.startswith("131072 (PASS, evidence/catalogue/")


def test_the_extend_attention_row_reads_the_threads_figure_from_its_record():
    row = next(r for r in catalogue.cases() if r.kit == "triton-extend-attention")
    assert row.predicted == "`by_case.hopper-blocks.sm120.shared_bytes` equals 106496"
    assert row.observed.startswith("106496 (PASS, evidence/catalogue/")


def test_a_case_without_a_kit_is_listed_with_its_reason():
    without = catalogue.without_kit()
    assert [w.threads for w in without] == [
        ("flashinfer 3031",), ("openxla/tokamax 1361", "openxla/tokamax PR 1401"), ("local-inference-lab/vllm 283",),
        ("zzhhjjj/gemma-triton-flash-attn PR 4",), ("flashinfer 4049", "flashinfer PR 4066")]
    assert all(w.why for w in without)
    page = catalogue.markdown([], without)
    assert "## Cases without a kit" in page and "| flashinfer 3031 |" in page and "no byte figure" in page
    assert catalogue.markdown([], []).count("without a kit") == 0
