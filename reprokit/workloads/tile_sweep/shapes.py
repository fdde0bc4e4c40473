"""The MoE GEMM problems one rank runs, derived from a model's config.

Pure arithmetic, no torch: the numbers come from the model file
(``kits/models/<model>.yml``), never typed in here. Conventions are those of
sglang's and FlashInfer's fused MoE:

- GEMM1 multiplies the routed tokens by ``w13``, the gate and up projections
  stored together (SwiGLU), so its N is twice the expert's intermediate size;
- GEMM2 multiplies the activated result by ``w2`` back to the hidden size;
- under tensor parallelism of degree P every rank holds every expert with
  1/P of the intermediate size; under expert parallelism of degree P every
  rank holds 1/P of the experts, whole.

A problem is a grouped GEMM: ``experts`` independent GEMMs of
``tokens_per_expert`` x N x K (routing assumed balanced).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GATE_AND_UP = 2  # w13 holds the gate and the up projection of a SwiGLU expert
DECODE_TOKENS_PER_EXPERT = (1, 2, 4, 8, 16, 32, 64)
PREFILL_TOKENS_PER_EXPERT = (128, 512, 2048)
DEFAULT_TOKENS_PER_EXPERT = DECODE_TOKENS_PER_EXPERT + PREFILL_TOKENS_PER_EXPERT
DECODE_MAX_TOKENS_PER_EXPERT = max(DECODE_TOKENS_PER_EXPERT)

REQUIRED_MODEL_KEYS = ("hidden_size", "moe_intermediate_size", "n_routed_experts", "num_experts_per_tok")
_PARALLELISM_RE = re.compile(r"^(tp|ep)([1-9][0-9]*)$")


@dataclass(frozen=True)
class MoeDims:
    hidden_size: int
    moe_intermediate_size: int
    n_routed_experts: int
    num_experts_per_tok: int

    @classmethod
    def from_model_config(cls, model_config: dict) -> MoeDims:
        missing = [key for key in REQUIRED_MODEL_KEYS if key not in model_config]
        if missing:
            raise ValueError(f"model_config lacks {', '.join(missing)} (needed to derive the MoE GEMM shapes)")
        values = {}
        for key in REQUIRED_MODEL_KEYS:
            value = model_config[key]
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"model_config.{key} must be a positive integer, got {value!r}")
            values[key] = value
        return cls(**values)


@dataclass(frozen=True)
class GemmProblem:
    """One grouped GEMM of one rank: ``experts`` x (tokens_per_expert x n x k), bf16 in and out."""

    parallelism: str
    gemm: str  # "gemm1" or "gemm2"
    experts: int
    tokens_per_expert: int
    n: int
    k: int

    @property
    def id(self) -> str:
        return f"{self.parallelism}-{self.gemm}-t{self.tokens_per_expert}"

    @property
    def m_total(self) -> int:
        return self.experts * self.tokens_per_expert

    @property
    def flops(self) -> int:
        return 2 * self.m_total * self.n * self.k

    def min_bytes(self, element_bytes: int = 2) -> int:
        """Bytes a perfect kernel moves: activations and weights read once, output written once."""
        return element_bytes * (self.m_total * self.k + self.experts * self.n * self.k + self.m_total * self.n)

    @property
    def phase(self) -> str:
        return "decode" if self.tokens_per_expert <= DECODE_MAX_TOKENS_PER_EXPERT else "prefill"

    def as_dict(self) -> dict:
        return {
            "id": self.id, "parallelism": self.parallelism, "gemm": self.gemm, "phase": self.phase,
            "experts": self.experts, "tokens_per_expert": self.tokens_per_expert,
            "m_total": self.m_total, "n": self.n, "k": self.k,
            "flops": self.flops, "min_bytes": self.min_bytes(),
        }


def parse_parallelism(name: str) -> tuple[str, int]:
    """``"tp8"`` -> ``("tp", 8)``; ``"ep8"`` -> ``("ep", 8)``."""
    match = _PARALLELISM_RE.match(name)
    if not match:
        raise ValueError(f"parallelism {name!r} is not tpN or epN (e.g. tp8, ep8)")
    return match.group(1), int(match.group(2))


def per_rank_gemms(dims: MoeDims, parallelism: str) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """Experts per rank and the (N, K) of GEMM1 and GEMM2 under one parallelism."""
    kind, degree = parse_parallelism(parallelism)
    if kind == "tp":
        if dims.moe_intermediate_size % degree:
            raise ValueError(f"{parallelism}: moe_intermediate_size {dims.moe_intermediate_size} is not divisible by {degree}")
        experts, intermediate = dims.n_routed_experts, dims.moe_intermediate_size // degree
    else:
        if dims.n_routed_experts % degree:
            raise ValueError(f"{parallelism}: n_routed_experts {dims.n_routed_experts} is not divisible by {degree}")
        experts, intermediate = dims.n_routed_experts // degree, dims.moe_intermediate_size
    gemm1 = (GATE_AND_UP * intermediate, dims.hidden_size)
    gemm2 = (dims.hidden_size, intermediate)
    return experts, gemm1, gemm2


def derive_problems(model_config: dict, parallelism: list[str], tokens_per_expert: list[int]) -> list[GemmProblem]:
    """Every (parallelism, GEMM, tokens-per-expert) problem, in that order."""
    dims = MoeDims.from_model_config(model_config)
    for tokens in tokens_per_expert:
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
            raise ValueError(f"tokens_per_expert must hold positive integers, got {tokens!r}")
    problems = []
    for name in parallelism:
        experts, (n1, k1), (n2, k2) = per_rank_gemms(dims, name)
        for gemm, n, k in (("gemm1", n1, k1), ("gemm2", n2, k2)):
            problems.extend(GemmProblem(name, gemm, experts, tokens, n, k) for tokens in tokens_per_expert)
    return problems
