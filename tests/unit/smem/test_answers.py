"""Checked answers of the serve step: known greedy answers, degenerate output, the dummy-weights skip."""

from __future__ import annotations

import pytest

from reprokit.workloads import answers


@pytest.mark.parametrize("text, reason", [
    ("", "empty answer"),
    ("   ", "empty answer"),
    ("!!!!!!!!!!!!!!!!", "16 x '!' in a row"),
    (" Paris!!!!!!!!", "8 x '!' in a row"),
    (" the the the the the the", "the token 'the' 6 times in a row"),
    (" Paris . . . . . .", "the token '.' 6 times in a row"),
])
def test_degenerate_output(text: str, reason: str) -> None:
    assert answers.degenerate(text) == reason


@pytest.mark.parametrize("text", [" Paris. It is also the largest city in the country.", " 42", "Au!!!", " aaaaaaa"])
def test_ordinary_output_is_not_degenerate(text: str) -> None:
    assert answers.degenerate(text) is None


def test_judge_right_wrong_and_degenerate() -> None:
    france = answers.PROMPTS[0]
    assert answers.judge(france, " Paris. It is also the largest city.")["ok"] is True
    wrong = answers.judge(france, " Lyon, a city in the south.")
    assert wrong["ok"] is False and wrong["reason"] == "none of Paris in the answer"
    garbage = answers.judge(france, " Paris!!!!!!!!!!")
    assert garbage["ok"] is False and garbage["reason"] == "degenerate output: 10 x '!' in a row"
    assert answers.judge(france, None) == {"prompt": france["prompt"], "expect_any": ["Paris"], "text": None,
                                           "ok": False, "reason": "no answer"}
    assert answers.judge(answers.PROMPTS[2], " Aurum")["ok"] is False  # a whole word, not a prefix


def test_check_asks_every_prompt_greedily_and_summarizes() -> None:
    asked = []
    replies = {"The capital of France is": " Paris.", "Question: What is 12 + 30? Answer:": " 42",
               "The chemical symbol for gold is": "!!!!!!!!!!!!"}

    def generate(prompt: str, max_new_tokens: int) -> str:
        asked.append((prompt, max_new_tokens))
        return replies[prompt]

    result = answers.check(generate, load_format=None)
    assert asked == [(p["prompt"], answers.MAX_NEW_TOKENS) for p in answers.PROMPTS]
    assert (result["checked"], result["ok"], result["right"], result["total"], result["degenerate"]) == (True, False, 2, 3, 1)
    assert result["first_wrong"] == "degenerate output: 12 x '!' in a row"


def test_random_weights_are_not_judged() -> None:
    result = answers.check(lambda *_: pytest.fail("no request for dummy weights"), load_format="dummy")
    assert result == {"checked": False, "ok": None, "prompts": [],
                      "skipped": "load_format dummy: random weights cannot answer; answers are not judged"}
