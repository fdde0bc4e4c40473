"""Checked answers: prompts whose greedy answer is known, and a check for degenerate output.

A server that answers ``/health`` may still emit garbage: autotuned FlashInfer tactics have been reported to
corrupt 4-19% of generations on SM120 under CUDA graphs, as runs of one token (``!!!!``; flashinfer issue 4841).
The serve step sends these prompts greedily (temperature 0) and judges each answer here; a server that is
ready and answers wrong gets its own outcome (``ready_answering_wrong``). Random weights
(``load_format: dummy``) cannot answer anything, so there the check is skipped with that reason.

Standard library only (this runs on the GPU host).
"""

from __future__ import annotations

import re
from typing import Any

# Facts any instruction-following LLM completes greedily; an answer is right when one expected word appears.
PROMPTS: tuple[dict[str, Any], ...] = (
    {"prompt": "The capital of France is", "expect_any": ["Paris"]},
    {"prompt": "Question: What is 12 + 30? Answer:", "expect_any": ["42", "forty-two", "forty two"]},
    {"prompt": "The chemical symbol for gold is", "expect_any": ["Au"]},
)
MAX_NEW_TOKENS = 32
MIN_RUN_CHARS = 8  # "!!!!!!!!": one non-space character this many times in a row
MIN_RUN_TOKENS = 6  # the same word (or punctuation token) this many times in a row


def longest_char_run(text: str) -> tuple[str, int]:
    """The non-space character repeated most often in a row, and how often."""
    best, count = "", 0
    for match in re.finditer(r"(\S)\1*", text):
        if len(match.group(0)) > count:
            best, count = match.group(1), len(match.group(0))
    return best, count


def longest_token_run(text: str) -> tuple[str, int]:
    """The token (a word, or one punctuation mark) repeated most often in a row, and how often."""
    tokens = re.findall(r"\w+|[^\w\s]", text)
    best, count, run = "", 0, 0
    for index, token in enumerate(tokens):
        run = run + 1 if index and token == tokens[index - 1] else 1
        if run > count:
            best, count = token, run
    return best, count


def degenerate(text: str) -> str | None:
    """Why ``text`` is degenerate output (empty, or runs of one token), or None."""
    if not text.strip():
        return "empty answer"
    char, chars = longest_char_run(text)
    if chars >= MIN_RUN_CHARS:
        return f"{chars} x {char!r} in a row"
    token, tokens = longest_token_run(text)
    if tokens >= MIN_RUN_TOKENS:
        return f"the token {token!r} {tokens} times in a row"
    return None


def judge(prompt: dict[str, Any], text: str | None) -> dict[str, Any]:
    """One answer: right (an expected word appears, nothing degenerate), or why not."""
    verdict: dict[str, Any] = {"prompt": prompt["prompt"], "expect_any": prompt["expect_any"], "text": text}
    if text is None:
        verdict.update(ok=False, reason="no answer")
        return verdict
    why_degenerate = degenerate(text)
    found = [word for word in prompt["expect_any"] if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.I)]
    verdict["degenerate"] = why_degenerate
    verdict["ok"] = bool(found) and why_degenerate is None
    if why_degenerate:
        verdict["reason"] = f"degenerate output: {why_degenerate}"
    elif not found:
        verdict["reason"] = f"none of {', '.join(prompt['expect_any'])} in the answer"
    return verdict


def summarize(verdicts: list[dict[str, Any]], skipped: str | None = None) -> dict[str, Any]:
    """The serve result's ``answers``: ok when every prompt was answered right; skipped (ok None) with a reason."""
    if skipped:
        return {"checked": False, "ok": None, "skipped": skipped, "prompts": []}
    wrong = [v for v in verdicts if not v["ok"]]
    return {"checked": True, "ok": not wrong, "right": len(verdicts) - len(wrong), "total": len(verdicts),
            "degenerate": sum(1 for v in verdicts if v.get("degenerate")),
            "first_wrong": wrong[0]["reason"] if wrong else None, "prompts": verdicts}


def check(generate, load_format: str | None) -> dict[str, Any]:
    """Ask ``generate(prompt, max_new_tokens)`` (-> text or None) every prompt greedily and judge the answers."""
    if load_format == "dummy":
        return summarize([], skipped="load_format dummy: random weights cannot answer; answers are not judged")
    return summarize([judge(p, generate(p["prompt"], MAX_NEW_TOKENS)) for p in PROMPTS])


def check_server(port: int, http, load_format: str | None) -> dict[str, Any]:
    """``check`` against sglang's ``POST /generate`` on ``port``; ``http(method, url, body, timeout_s)`` -> (status, body)."""
    import json

    def generate(prompt: str, max_new_tokens: int) -> str | None:
        status, body = http("POST", f"http://127.0.0.1:{port}/generate",
                            {"text": prompt, "sampling_params": {"max_new_tokens": max_new_tokens, "temperature": 0}},
                            timeout_s=300)
        try:
            return str(json.loads(body).get("text", "")) if status == 200 else None
        except ValueError:
            return None

    return check(generate, load_format)


LOG_PREFIX = "[reprokit answers]"


def log_lines(summary: dict[str, Any]) -> list[str]:
    """``answers.log`` of the serve step: one line per wrong answer (the triage reads them), or one summary line."""
    if not summary["checked"]:
        return [f"{LOG_PREFIX} not checked: {summary['skipped']}"]
    wrong = [p for p in summary["prompts"] if not p["ok"]]
    if not wrong:
        return [f"{LOG_PREFIX} {summary['total']} of {summary['total']} answers right"]
    return [f"{LOG_PREFIX} {len(wrong)} of {summary['total']} answers wrong: prompt {p['prompt']!r}: {p['reason']}"
            for p in wrong]
