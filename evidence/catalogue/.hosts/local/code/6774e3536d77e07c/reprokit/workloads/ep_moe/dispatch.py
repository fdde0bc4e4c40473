"""Expert-parallel dispatch and combine by all-to-all: the token movement of an EP MoE layer, in torch only.

Why it is ours and not a library's: the kernel under test (FlashInfer's CUTLASS fused MoE with ``ep_size``,
``ep_rank``) computes the experts a rank holds and leaves the others out; moving tokens to the ranks that hold
their experts and their partial outputs back is the caller's (sglang's and vLLM's EP layers do the same with
their own all-to-all). This module is that movement, plainly, so that any backend runs it: NCCL on GPUs, gloo
on a CPU (which is how it is tested where no GPU is).

Experts are sharded in contiguous blocks: rank ``r`` holds experts ``[r * E/N, (r + 1) * E/N)``. A token is sent
once to each rank holding at least one of its top-k experts, with its global expert ids and scales; the kernel on
that rank sums the contributions of its own experts; ``combine`` brings each partial sum home and adds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class DispatchPlan:
    """Which local token rows go to which rank, in send order (rank 0's rows first)."""

    send_index: Any  # int64 [S]: row of the local batch for each sent row
    send_counts: list[int]  # rows sent to each rank
    recv_counts: list[int]  # rows received from each rank


def owner_ranks(topk_ids: Any, experts_per_rank: int) -> Any:
    """The rank holding each selected expert (contiguous blocks of ``experts_per_rank``)."""
    return topk_ids.div(experts_per_rank, rounding_mode="floor")


def send_order(topk_ids: Any, experts_per_rank: int, world_size: int) -> tuple[Any, list[int]]:
    """Local rows grouped by destination rank; a token goes once to each rank that holds any of its experts."""
    import torch  # noqa: PLC0415

    owners = owner_ranks(topk_ids.long(), experts_per_rank)
    needs = torch.zeros(topk_ids.shape[0], world_size, dtype=torch.bool, device=topk_ids.device)
    needs.scatter_(1, owners, True)
    per_rank = [needs[:, rank].nonzero().flatten() for rank in range(world_size)]
    return torch.cat(per_rank), [int(rows.numel()) for rows in per_rank]


def _all_to_all_rows(rows: Any, send_counts: list[int], recv_counts: list[int], group: Any) -> Any:
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    out = torch.empty((sum(recv_counts), *rows.shape[1:]), dtype=rows.dtype, device=rows.device)
    dist.all_to_all_single(out, rows.contiguous(), output_split_sizes=recv_counts, input_split_sizes=send_counts,
                           group=group)
    return out


def plan(topk_ids: Any, experts_per_rank: int, world_size: int, group: Any = None) -> DispatchPlan:
    """The send order here and, by one all-to-all of the counts, how many rows each rank sends here."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    send_index, send_counts = send_order(topk_ids, experts_per_rank, world_size)
    counts = torch.tensor(send_counts, dtype=torch.int64, device=topk_ids.device)
    received = torch.empty_like(counts)
    dist.all_to_all_single(received, counts, group=group)
    return DispatchPlan(send_index=send_index, send_counts=send_counts, recv_counts=[int(c) for c in received.tolist()])


def dispatch(the_plan: DispatchPlan, tensors: list[Any], group: Any = None) -> list[Any]:
    """Each tensor's rows (tokens, their expert ids, their scales) moved to the ranks that need them."""
    return [_all_to_all_rows(t.index_select(0, the_plan.send_index), the_plan.send_counts, the_plan.recv_counts, group)
            for t in tensors]


def combine(the_plan: DispatchPlan, partial_out: Any, num_tokens: int, group: Any = None) -> Any:
    """The partial outputs sent back to the ranks the rows came from and summed per token, in float32."""
    import torch  # noqa: PLC0415

    back = _all_to_all_rows(partial_out, the_plan.recv_counts, the_plan.send_counts, group)
    out = torch.zeros((num_tokens, partial_out.shape[1]), dtype=torch.float32, device=partial_out.device)
    out.index_add_(0, the_plan.send_index, back.float())
    return out
