"""A tiny Qwen3-MoE with seeded random weights and a BPE tokenizer trained here: the model the real vLLM serves in the tests.

Nothing is downloaded: the config is built in code, the weights are ``torch.manual_seed(SEED)`` random, and the
tokenizer is a BPE trained with ``tokenizers`` on a corpus generated from the same seed. The same versions of
torch, transformers and tokenizers (the vLLM lock, ``docker/requirements-vllm-cpu.lock``) give the same bytes every time, so
the served model's greedy answers are the same on every machine of this kind, and a kit may expect them.

Why these choices (measured with vllm-cpu 0.32.0):
- 8 experts, top-2, 2 layers: the smallest MoE that still goes through vLLM's CPU fused-MoE kernel and splits
  4/8 experts per rank under ``-tp 2 --enable-expert-parallel``;
- the model's vocabulary is exactly the tokenizer's: ids the tokenizer cannot decode would make the benchmark read
  empty outputs (TPOT 0);
- words made of syllables, not bytes: a byte-level tokenizer trained on a few KB has too few real tokens.

Run with the vLLM venv's Python (it has torch, transformers and tokenizers):
``python tests/services/tiny_moe.py OUT_DIR``. Prints the sha256 of every file it wrote.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

SEED = 20261206
CORPUS_SENTENCES = 600
VOCAB_SIZE = 2048
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>"]
SYLLABLES = [c + v for c in "bdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
PUNCTUATION = [".", ".", ".", "?", "!"]


def corpus(rng: random.Random) -> list[str]:
    """Sentences of made-up words (a few KB): enough distinct pieces for a 2048-token BPE."""
    words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(900)]
    words += ["the", "of", "and", "is", "capital", "France", "Paris", "gold", "answer", "question", "what"]
    lines = []
    for _ in range(CORPUS_SENTENCES):
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(4, 11)))
        lines.append(sentence[0].upper() + sentence[1:] + rng.choice(PUNCTUATION))
    return lines


def train_tokenizer(lines: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return tokenizer


def build(out_dir: Path) -> dict[str, str]:
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen3MoeConfig, Qwen3MoeForCausalLM

    rng = random.Random(SEED)
    raw = train_tokenizer(corpus(rng))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|endoftext|>", pad_token="<|pad|>",
                                        model_max_length=512)
    eos_id, pad_id = raw.token_to_id("<|endoftext|>"), raw.token_to_id("<|pad|>")
    config = Qwen3MoeConfig(
        vocab_size=raw.get_vocab_size(), hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32, num_experts=8,
        num_experts_per_tok=2, decoder_sparse_step=1, norm_topk_prob=True, max_position_embeddings=512,
        bos_token_id=eos_id, eos_token_id=eos_id, pad_token_id=pad_id, tie_word_embeddings=False,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(SEED)
    model = Qwen3MoeForCausalLM(config).to(torch.bfloat16)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out_dir.iterdir()) if p.is_file()}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/services/tiny_moe.py OUT_DIR")
    print(json.dumps(build(Path(sys.argv[1])), indent=1))
