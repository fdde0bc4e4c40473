"""What every rank of every scenario did, in the figures a kit's expectations read (standard library only).

The tactics a rank profiled are read from its own log (``log_read``: FlashInfer's ``[Autotuner]: profiling <runner>
<tactic>`` lines, as ``torch.distributed.run`` saved them per rank); gemm2's tactics are numbered after gemm1's in
the runner, so the rank's ``gemm1_tactic_count`` splits them. One rule throughout: a claim "on every rank" holds
only where every rank reported and profiled something; a rank without a result or a log makes it false, never
vacuously true.
"""

from __future__ import annotations

from typing import Any


def _reported(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [rank for rank in scenario["ranks"] if "error" not in rank and rank.get("log_read") is not None]


def profiled_ids(rank: dict[str, Any]) -> set[int]:
    return set(rank["log_read"]["profiled"])


def profiled_by_gemm(rank: dict[str, Any]) -> dict[str, list[int]]:
    ids, first = sorted(profiled_ids(rank)), rank["gemm1_tactic_count"]
    return {"gemm1": [t for t in ids if t < first], "gemm2": [t for t in ids if t >= first]}


def blocked_ids(blocklist: dict[str, list[int]]) -> set[int]:
    """Blocked tactic ids; gemm1's and gemm2's share one numbering in the runner (gemm2's follow gemm1's)."""
    return {tactic for tactics in blocklist.values() for tactic in tactics}


def _skips_gemm1(scenario: dict[str, Any]) -> bool:
    return any(op.startswith("trtllm::fused_moe::gemm1") for op in scenario["skip_ops"])


def scenario_figures(scenario: dict[str, Any], world_size: int) -> dict[str, Any]:
    ranks = _reported(scenario)
    complete = scenario["rc"] == 0 and len(ranks) == world_size
    by_gemm = {rank["rank"]: profiled_by_gemm(rank) for rank in ranks}
    profiled = [sorted(profiled_ids(rank)) for rank in ranks]
    chosen = [[(c["op"], c["bucket_tokens"], c["tactic"]) for c in rank["chosen"]] for rank in ranks]
    blocked = blocked_ids(scenario["blocklist"])
    steps = [step for rank in ranks for step in [rank["tuning_step"], *rank["steps"]]]
    own_counts = [sorted(set(rank["profiled"]["gemm1"]) | set(rank["profiled"]["gemm2"])) for rank in ranks]
    return {
        "name": scenario["name"], "complete": complete, "ranks_reported": len(ranks),
        "profiled_per_rank": {str(r): {gemm: len(ids) for gemm, ids in g.items()} for r, g in by_gemm.items()},
        "profile_lines_per_rank": {str(rank["rank"]): rank["log_read"]["profile_lines"] for rank in ranks},
        "rank_count_matches_log": [own == logged for own, logged in zip(own_counts, profiled)],
        "same_profiled_on_every_rank": complete and all(p == profiled[0] for p in profiled),
        "same_chosen_on_every_rank": complete and all(c == chosen[0] for c in chosen),
        "blocked_tactics_profiled": sorted({(rank["rank"], t) for rank in ranks for t in profiled_ids(rank) & blocked}),
        "gemm1_profiled_while_skipped": sum(len(g["gemm1"]) for g in by_gemm.values()) if _skips_gemm1(scenario) else None,
        "failed_while_profiling": sorted({t for rank in ranks for t in rank["log_read"]["failed_while_profiling"]}),
        "tuning_s": [rank["tuning_s"] for rank in ranks],
        "max_rel_err": max(step["rel_err"] for step in steps) if steps else None,
        "all_finite": bool(steps) and all(step["finite"] for step in steps),
    }


def _honoured_blocklist(figure: dict[str, Any]) -> bool:
    profiled_everywhere = all(counts["gemm1"] and counts["gemm2"] for counts in figure["profiled_per_rank"].values())
    return figure["complete"] and profiled_everywhere and not figure["blocked_tactics_profiled"]


def _honoured_skip(figure: dict[str, Any]) -> bool:
    gemm2_everywhere = all(counts["gemm2"] for counts in figure["profiled_per_rank"].values())
    return figure["complete"] and gemm2_everywhere and figure["gemm1_profiled_while_skipped"] == 0


def summarise(scenarios: list[dict[str, Any]], world_size: int, blocklist: dict[str, list[int]]) -> dict[str, Any]:
    """Per scenario figures, and the claims across scenarios the kit expects."""
    figures = [scenario_figures(s, world_size) for s in scenarios]
    plain_sets = [profiled_ids(rank) for s in scenarios if not (s["blocklist"] or s["skip_ops"] or s["env"])
                  for rank in _reported(s)]
    blocked = blocked_ids(blocklist)
    with_blocklist = [f for f, s in zip(figures, scenarios) if s["blocklist"]]
    with_skip = [f for f, s in zip(figures, scenarios) if _skips_gemm1(s)]
    with_group = [f for f, s in zip(figures, scenarios) if s["process_group"]]
    env_runs = {s["name"]: {r["rank"]: sorted(profiled_ids(r)) for r in _reported(s)} for s in scenarios}
    pair = (env_runs.get("blocklist"), env_runs.get("blocklist-dist-aware-env"))
    errors = [f["max_rel_err"] for f in figures if f["max_rel_err"] is not None]
    return {
        "every_rank_reported": all(f["complete"] for f in figures),
        "ranks_per_scenario": {f["name"]: f["ranks_reported"] for f in figures},
        "tactics_profiled_plain": sorted(set.union(*plain_sets)) if plain_sets else [],
        "blocked_tactics_profiled_plain": sorted(blocked & set.union(*plain_sets)) if plain_sets else [],
        "blocklist_honoured_on_every_rank": bool(with_blocklist) and all(_honoured_blocklist(f) for f in with_blocklist),
        "skip_ops_honoured_on_every_rank": bool(with_skip) and all(_honoured_skip(f) for f in with_skip),
        "chosen_agree_with_process_group": bool(with_group) and all(f["same_chosen_on_every_rank"] for f in with_group),
        "dist_aware_env_changed_profiling": None if None in pair or not pair[0] else pair[0] != pair[1],
        "failed_while_profiling": sorted({t for f in figures for t in f["failed_while_profiling"]}),
        "max_rel_err": max(errors) if errors else None,
        "all_finite": all(f["all_finite"] for f in figures),
        "figures": figures,
    }
