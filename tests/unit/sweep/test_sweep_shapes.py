"""Shape derivation: the per-rank MoE GEMMs of GLM-5, from the kit's own model file."""

from __future__ import annotations

import pytest
import yaml

from reprokit.workloads.tile_sweep.shapes import (
    DEFAULT_TOKENS_PER_EXPERT,
    GemmProblem,
    MoeDims,
    derive_problems,
    parse_parallelism,
    per_rank_gemms,
)


@pytest.fixture
def glm5(repo) -> dict:
    return yaml.safe_load((repo / "kits" / "models" / "glm-5.yml").read_text())


def test_model_file_holds_the_config_numbers(glm5):
    assert glm5["architecture"] == "GlmMoeDsaForCausalLM"
    assert (glm5["hidden_size"], glm5["moe_intermediate_size"], glm5["n_routed_experts"]) == (6144, 2048, 256)
    assert (glm5["n_shared_experts"], glm5["num_experts_per_tok"]) == (1, 8)
    assert (glm5["num_hidden_layers"], glm5["first_k_dense_replace"]) == (78, 3)
    assert all(not isinstance(v, (dict, list)) for v in glm5.values()), "the model file is a flat mapping of scalars"


def test_tp8_per_rank_gemms(glm5):
    experts, gemm1, gemm2 = per_rank_gemms(MoeDims.from_model_config(glm5), "tp8")
    assert experts == 256
    assert gemm1 == (512, 6144)  # N = 2 x 2048/8 (gate and up), K = hidden
    assert gemm2 == (6144, 256)


def test_ep8_per_rank_gemms(glm5):
    experts, gemm1, gemm2 = per_rank_gemms(MoeDims.from_model_config(glm5), "ep8")
    assert experts == 32
    assert gemm1 == (4096, 6144)
    assert gemm2 == (6144, 2048)


def test_problems_cover_decode_and_prefill_in_order(glm5):
    problems = derive_problems(glm5, ["tp8", "ep8"], list(DEFAULT_TOKENS_PER_EXPERT))
    assert len(problems) == 2 * 2 * 10
    assert [p.id for p in problems[:3]] == ["tp8-gemm1-t1", "tp8-gemm1-t2", "tp8-gemm1-t4"]
    assert problems[-1].id == "ep8-gemm2-t2048"
    assert sum(p.phase == "decode" for p in problems) == 2 * 2 * 7
    ep8_gemm1_decode = next(p for p in problems if p.id == "ep8-gemm1-t1")
    assert (ep8_gemm1_decode.experts, ep8_gemm1_decode.m_total, ep8_gemm1_decode.n, ep8_gemm1_decode.k) == (32, 32, 4096, 6144)


def test_flops_and_bytes_of_one_problem():
    problem = GemmProblem("ep8", "gemm1", experts=32, tokens_per_expert=64, n=4096, k=6144)
    assert problem.m_total == 2048
    assert problem.flops == 2 * 2048 * 4096 * 6144
    # bf16: activations 2048x6144, weights 32x4096x6144, output 2048x4096
    assert problem.min_bytes() == 2 * (2048 * 6144 + 32 * 4096 * 6144 + 2048 * 4096)
    assert problem.phase == "decode"


@pytest.mark.parametrize("name, parsed", [("tp8", ("tp", 8)), ("ep8", ("ep", 8)), ("ep16", ("ep", 16))])
def test_parse_parallelism(name, parsed):
    assert parse_parallelism(name) == parsed


@pytest.mark.parametrize("name", ["dp8", "tp", "tp0", "TP8", "tp8ep8"])
def test_parse_parallelism_rejects(name):
    with pytest.raises(ValueError, match="is not tpN or epN"):
        parse_parallelism(name)


def test_indivisible_parallelism_is_an_error(glm5):
    with pytest.raises(ValueError, match="n_routed_experts 256 is not divisible by 3"):
        derive_problems(glm5, ["ep3"], [1])


def test_missing_model_numbers_are_named():
    with pytest.raises(ValueError, match="lacks moe_intermediate_size, n_routed_experts"):
        derive_problems({"hidden_size": 6144, "num_experts_per_tok": 8}, ["tp8"], [1])


def test_tokens_must_be_positive_integers(glm5):
    with pytest.raises(ValueError, match="positive integers"):
        derive_problems(glm5, ["tp8"], [0])
