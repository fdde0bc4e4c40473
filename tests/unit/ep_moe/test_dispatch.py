"""The EP step's token movement with real collectives: torch.distributed's gloo backend, N processes on the CPU.

The experts here are a known function (expert e multiplies by e + 1) so that the combined output has an exact
value: sum over a token's top-k of scale * (e + 1) * x. The fused MoE kernel is not in this test (it needs a GPU);
what the GPU run checks of it is its relative error against a float32 reference, per rank. Skipped where torch is
not installed (the project's lock does not carry it; the GPU host and a CPU torch both do).
"""

from __future__ import annotations

import os
import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from reprokit.workloads.ep_moe import dispatch  # noqa: E402

EXPERTS, TOP_K, HIDDEN = 256, 8, 16


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rank(rank: int, world_size: int, port: int, tokens: int, results: dict) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    generator = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(tokens, HIDDEN, generator=generator, dtype=torch.float64)
    ids = torch.topk(torch.randn(tokens, EXPERTS, generator=generator), TOP_K).indices.to(torch.int32)
    scales = torch.softmax(torch.randn(tokens, TOP_K, generator=generator, dtype=torch.float64), dim=-1)
    local = EXPERTS // world_size
    plan = dispatch.plan(ids, local, world_size)
    x_in, ids_in, scales_in = dispatch.dispatch(plan, [x, ids, scales])
    mine = (ids_in.long() // local) == rank
    factor = ((ids_in.long() + 1) * scales_in * mine).sum(dim=1, keepdim=True)
    combined = dispatch.combine(plan, x_in * factor, tokens)
    expected = (x * ((ids.long() + 1) * scales).sum(dim=1, keepdim=True)).float()
    results[rank] = {"rel_err": float((combined - expected).abs().max() / expected.abs().max()), "received": plan.recv_counts,
                     "sent": plan.send_counts, "distinct_owners": int(dispatch.owner_ranks(ids.long(), local).unique().numel())}
    dist.destroy_process_group()


@pytest.mark.parametrize("world_size", [1, 2, 8])
def test_dispatch_and_combine_sum_every_expert_once(world_size: int) -> None:
    tokens = 12
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_rank, args=(world_size, _free_port(), tokens, results), nprocs=world_size, join=True)
        got = dict(results)
    assert sorted(got) == list(range(world_size))
    for rank, result in got.items():
        assert result["rel_err"] < 1e-6, (rank, result)  # combine sums in float32
        # what rank r receives from rank s is what s sent to r
        for other in range(world_size):
            assert result["received"][other] == got[other]["sent"][rank]
    if world_size == 1:
        assert got[0]["sent"] == [tokens]  # one owner: each token sent once, to itself
    else:
        assert sum(sum(r["sent"]) for r in got.values()) > world_size * tokens  # top-8 of 256 spans several ranks


def test_send_order_sends_a_token_once_per_owner() -> None:
    ids = torch.tensor([[0, 1, 40], [33, 34, 35], [255, 0, 100]], dtype=torch.int32)
    send_index, counts = dispatch.send_order(ids, 32, 8)  # 8 ranks of 32 experts
    assert counts == [2, 2, 0, 1, 0, 0, 0, 1]
    assert send_index.tolist() == [0, 2, 0, 1, 2, 2]
