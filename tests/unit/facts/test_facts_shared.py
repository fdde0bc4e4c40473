"""The sweep and the triage read the shared upstream messages the same way (facts.errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.triage.api import triage_files
from reprokit.triage.patterns import PATTERNS
from reprokit.workloads.facts import upstream_errors
from reprokit.workloads.facts.serve_phases import DEAD, MARKS, phase_of_line
from reprokit.workloads.tile_sweep import classify

SHARED = [value for value in vars(upstream_errors).values() if isinstance(value, upstream_errors.ErrorMessage)]
STICKY_LINES = ["RuntimeError: CUDA error: an illegal memory access was encountered",
                "RuntimeError: CUDA error: an illegal instruction was encountered",
                "RuntimeError: CUDA error: misaligned address",
                "RuntimeError: CUDA error: unspecified launch failure"]


@pytest.mark.parametrize("message", SHARED, ids=lambda m: m.name)
def test_each_shared_message_matches_its_example_and_names_its_groups(message: upstream_errors.ErrorMessage) -> None:
    import re

    match = re.search(message.regex, message.example)
    assert match is not None
    assert len(message.fields) == re.compile(message.regex).groups


def test_the_triage_reads_the_shared_messages_from_the_facts() -> None:
    triage_regexes = {pattern.kind: pattern.regex for pattern in PATTERNS}
    shared_in_triage = [m for m in SHARED if m.name in triage_regexes]
    assert len(shared_in_triage) == 10
    assert all(triage_regexes[m.name] == m.regex for m in shared_in_triage)


@pytest.mark.parametrize("line", STICKY_LINES)
def test_a_sticky_cuda_error_is_sticky_to_the_sweep_and_fatal_to_the_triage(line: str, tmp_path: Path) -> None:
    assert classify.classify(line)["sticky"] is True
    log = tmp_path / "server.log"
    log.write_text("[2026-02-19 10:12:31] The server is fired up and ready to roll!\n"
                   f"{line}\n", encoding="utf-8")  # a traceback's last line, as sglang's stderr carries it
    assert triage_files([log]).verdict.name == "FATAL"
    assert phase_of_line(line).phase == DEAD


def test_a_non_sticky_cuda_error_is_neither() -> None:
    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert classify.classify(line)["sticky"] is False
    assert phase_of_line(line) is None


@pytest.mark.parametrize("mark", MARKS, ids=lambda m: f"{m.phase}:{m.regex[:20]}")
def test_each_phase_mark_reads_its_own_example(mark) -> None:
    assert phase_of_line(mark.example).phase == mark.phase


def test_autotune_progress_says_how_far() -> None:
    line = "[AutoTuner]: Tuning trtllm::fused_moe::gemm2:  50%|█████     | 3/6 [00:01<00:01,  2.90profile/s]"
    found = phase_of_line(line)
    assert (found.phase, found.done, found.total) == ("autotune", 3, 6)
