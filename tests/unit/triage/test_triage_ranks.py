"""The rank model on real logs: FlashInfer 0.6.18's fused MoE under torch.distributed.run on one H200 (N=1,
evidence/h200-ep-moe-n1/run1), and an eight-rank log DERIVED from it.

The N=1 logs are the machine's own output, as `torch.distributed.run --tee 3` wrote it (`[default0]:` before
every line). No eight-GPU machine was lent, so the eight-rank case is built only from real structure: rank 0's
real lines, relabelled `[default<R>]:` for R in 0..7 and interleaved line by line. It is derived, not observed:
it tests that the rank model generalises from one prefix to eight, not what eight real ranks write.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from reprokit.triage import triage_files
from reprokit.triage.ranks import rank_model

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "evidence" / "h200-ep-moe-n1" / "run1"
BLOCKED = {2, 5, 47}  # the kit's blocklist: gemm1 2, 5; gemm2 47 (gemm2's ids follow gemm1's 45)
GEMM1, GEMM2 = "trtllm::fused_moe::gemm1::MoERunner", "trtllm::fused_moe::gemm2::MoERunner"


def _derived_eight(scenario: str, tmp_path: Path) -> Path:
    """Rank 0's real server.log relabelled as eight ranks and interleaved line by line (derived, see above)."""
    lines = (RUN / scenario / "server.log").read_text().splitlines()
    mixed = [line.replace("[default0]:", f"[default{rank}]:") for line in lines for rank in range(8)]
    path = tmp_path / f"{scenario}-derived-8.log"
    path.write_text("\n".join(mixed) + "\n")
    return path


def test_real_n1_blocklist_run_is_one_rank_that_never_profiled_a_blocked_tactic() -> None:
    model = rank_model([RUN / "blocklist" / "server.log"])
    assert model["rank_count"] == 1
    (rank,) = model["ranks"]
    assert (rank["rank"], rank["prefix"]) == (0, "[default0]:")
    assert len(rank["profiled"]) == 123 and BLOCKED.isdisjoint(rank["profiled"])
    assert rank["profile_lines"] == 369  # 123 tactics x 3 token buckets
    assert rank["blocklist_filtered"] == [[GEMM1, 2, 43], [GEMM2, 1, 80]]
    assert rank["skipped"] == []
    assert rank["nccl_lines"] == 95
    assert model["interleaved"] is False and model["lines_without_rank"] == 0


def test_real_n1_plain_run_profiles_every_tactic_and_skip_ops_none_of_gemm1() -> None:
    plain = rank_model([RUN / "plain" / "server.log"])["ranks"][0]
    assert plain["profiled"] == list(range(126)) and plain["profile_lines"] == 378
    skip = rank_model([RUN / "skip-gemm1" / "server.log"])["ranks"][0]
    assert skip["profiled"] == list(range(45, 126)) and skip["profile_lines"] == 243


def test_real_n1_per_rank_file_reads_as_that_rank() -> None:
    """torch.distributed.run's own per-rank file has no prefix; its name (rank0.log) says whose it is."""
    model = rank_model([RUN / "blocklist" / "rank0.log.gz"])
    assert model["rank_count"] == 1 and model["ranks"][0]["prefix"] == "[rank0]:"
    assert len(model["ranks"][0]["profiled"]) == 123


def test_real_n1_triage_sees_one_rank_process_and_no_unknown_line() -> None:
    report = triage_files([RUN / "blocklist" / "server.log"], flashinfer_version="0.6.18").to_json()
    assert report["ranks"] == ["rank0"]
    assert [p["process"] for p in report["processes"] if p["process"].startswith("default")] == ["default0"]
    assert report["counts"]["unknown_lines"] == 0
    assert report["counts"]["lines_by_format"]["nccl_debug"] == 95


def test_derived_eight_ranks_read_as_one_server_with_eight_rank_processes(tmp_path: Path) -> None:
    log = _derived_eight("blocklist", tmp_path)
    model = rank_model([log])
    assert model["rank_count"] == 8 and [r["rank"] for r in model["ranks"]] == list(range(8))
    assert model["interleaved"] is True
    assert model["same_profiled_on_every_rank"] is True and model["same_skipped_on_every_rank"] is True
    assert all(len(r["profiled"]) == 123 and BLOCKED.isdisjoint(r["profiled"]) for r in model["ranks"])
    assert all(r["blocklist_filtered"] == [[GEMM1, 2, 43], [GEMM2, 1, 80]] for r in model["ranks"])
    assert model["nccl_lines"] == 8 * 95
    report = triage_files([log], flashinfer_version="0.6.18").to_json()
    assert report["ranks"] == [f"rank{r}" for r in range(8)]
    assert sorted(p["process"] for p in report["processes"] if p["process"].startswith("default")) == \
        [f"default{r}" for r in range(8)]


def test_derived_eight_ranks_one_of_which_ignored_the_blocklist(tmp_path: Path) -> None:
    """Rank 5 given the real line of tactic 47 from the plain run: the model names the rank that profiled it."""
    log = _derived_eight("blocklist", tmp_path)
    plain = (RUN / "plain" / "server.log").read_text().splitlines()
    line_47 = next(line for line in plain if "MoERunner object at " in line and "> 47, shapes=" in line)
    with open(log, "a") as fh:
        fh.write(line_47[line_47.index("[default0]:"):].replace("[default0]:", "[default5]:") + "\n")
    model = rank_model([log])
    assert model["same_profiled_on_every_rank"] is False
    assert [r["rank"] for r in model["ranks"] if 47 in r["profiled"]] == [5]


def test_rank_files_of_eight_ranks(tmp_path: Path) -> None:
    """One file per rank, as torch.distributed.run saves them (derived from rank 0's real file, as above)."""
    data = gzip.decompress((RUN / "skip-gemm1" / "rank0.log.gz").read_bytes())
    paths = []
    for rank in range(8):
        paths.append(tmp_path / f"rank{rank}.log")
        paths[-1].write_bytes(data)
    model = rank_model(paths)
    assert model["rank_count"] == 8 and model["same_profiled_on_every_rank"] is True
    assert model["profiled_on_every_rank"] == list(range(45, 126))
    assert model["interleaved"] is False
