"""The roofline every measured row is held against, and the timing helper.

The two ceilings are measured in the same run, on the same device, never
taken from a datasheet: device-to-device copy bandwidth (bytes read plus
bytes written per second) and the dense bf16 GEMM rate of torch.matmul.
The pure functions here are tested on CPU; the measuring ones take torch as
an argument so this module imports nothing outside the standard library.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

COPY_BYTES = 2 << 30  # source size of the copy: 2 GiB read + 2 GiB written, ~35x an H200's L2
READ_BYTES = 2 << 30
DENSE_GEMM_DIM = 8192  # 8192^3 bf16 matmul: ~1.1 TFLOP a launch


def score(flops: float, bytes_moved: float, time_s: float, peak_tflops: float, copy_gbps: float) -> dict[str, Any]:
    """TFLOP/s, GB/s, which ceiling binds, and the fraction of the roofline a measured time reaches."""
    bound_compute_s = flops / (peak_tflops * 1e12)
    bound_memory_s = bytes_moved / (copy_gbps * 1e9)
    return {
        "tflops": flops / time_s / 1e12,
        "gbps": bytes_moved / time_s / 1e9,
        "bound": "memory" if bound_memory_s >= bound_compute_s else "compute",
        "fraction_of_roofline": max(bound_compute_s, bound_memory_s) / time_s,
        "fraction_of_copy_bandwidth": bytes_moved / time_s / 1e9 / copy_gbps,
        "fraction_of_gemm_peak": flops / time_s / 1e12 / peak_tflops,
    }


def time_cuda(torch: Any, fn: Callable[[], Any], *, warmup: int, reps: int, flush: Any | None) -> dict[str, Any]:
    """Median time of ``fn`` with CUDA events, after ``warmup`` calls; ``flush`` (a tensor) is
    zeroed before every timed call so each starts with a cold L2. The host never waits
    inside the loop, so it runs ahead and no launch gap lands inside the events."""
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times_s = sorted(start.elapsed_time(end) / 1e3 for start, end in events)
    return {
        "median_s": statistics.median(times_s),
        "min_s": times_s[0],
        "max_s": times_s[-1],
        "reps": reps,
        "warmup": warmup,
    }


def reps_for(estimate_s: float, target_total_s: float = 0.05, low: int = 5, high: int = 20) -> int:
    """How many timed repetitions: enough for ~``target_total_s`` of kernel time, within [low, high]."""
    if estimate_s <= 0:
        return high
    return max(low, min(high, int(target_total_s / estimate_s)))


def _memory_timings(torch: Any, flush: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    src = torch.empty(COPY_BYTES // 2, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    copy = time_cuda(torch, lambda: dst.copy_(src), warmup=3, reps=20, flush=flush)
    read = time_cuda(torch, lambda: src.sum(dtype=torch.float32), warmup=3, reps=20, flush=flush)
    return copy, read


def _gemm_timing(torch: Any, flush: Any) -> dict[str, Any]:
    a = torch.randn(DENSE_GEMM_DIM, DENSE_GEMM_DIM, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(DENSE_GEMM_DIM, DENSE_GEMM_DIM, dtype=torch.bfloat16, device="cuda")
    return time_cuda(torch, lambda: torch.matmul(a, b), warmup=3, reps=10, flush=flush)


def measure_ceilings(torch: Any, flush: Any) -> dict[str, Any]:
    """Copy bandwidth, read bandwidth and dense GEMM rate of the current device, measured now."""
    copy, read = _memory_timings(torch, flush)
    gemm = _gemm_timing(torch, flush)
    torch.cuda.empty_cache()
    dim = DENSE_GEMM_DIM
    return {
        "copy_gbps": 2 * COPY_BYTES / copy["median_s"] / 1e9,
        "copy": {"bytes_read": COPY_BYTES, "bytes_written": COPY_BYTES, **copy},
        "read_gbps": READ_BYTES / read["median_s"] / 1e9,
        "read": {"bytes_read": READ_BYTES, "how": "torch.sum of a bf16 tensor into fp32", **read},
        "dense_gemm_tflops": 2 * dim**3 / gemm["median_s"] / 1e12,
        "dense_gemm": {"m": dim, "n": dim, "k": dim, "dtype": "bfloat16", "how": "torch.matmul, random inputs", **gemm},
    }
