"""The autotuner's log lines, read by the triage's rank model and the workloads, on the real example of each."""

from reprokit.workloads.facts.autotuner import (
    BLOCKLIST_FILTERED,
    BLOCKLIST_FILTERED_EXAMPLE,
    PROFILED_TACTIC,
    PROFILED_TACTIC_EXAMPLE,
)


def test_a_profiled_tactic_line_gives_its_runner_and_tactic():
    found = PROFILED_TACTIC.search(PROFILED_TACTIC_EXAMPLE)
    assert found is not None
    assert found.group(2) == "1"
    assert found.group(1) == ("<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at "
                              "0x7fc95867d340>")


def test_a_blocklist_line_gives_the_filtered_count_the_runner_and_what_remains():
    found = BLOCKLIST_FILTERED.search(BLOCKLIST_FILTERED_EXAMPLE)
    assert found is not None
    assert found.groups() == ("2", "trtllm::fused_moe::gemm1::MoERunner", "43")
