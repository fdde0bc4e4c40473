"""Test double of `python -m sglang.bench_serving`: real requests to the double server, sglang's result keys."""

import argparse
import json
import statistics
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def one(url, output_len):
    started = time.perf_counter()
    body = json.dumps({"text": "hello " * 8, "sampling_params": {"max_new_tokens": output_len}}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        tokens = json.loads(response.read())["meta_info"]["completion_tokens"]
    return time.perf_counter() - started, tokens


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--backend", "--host", "--dataset-name", "--output-file"):
        parser.add_argument(flag)
    for flag in ("--port", "--random-input-len", "--random-output-len", "--num-prompts", "--max-concurrency"):
        parser.add_argument(flag, type=int)
    args, _ = parser.parse_known_args()
    url = f"http://{args.host}:{args.port}/generate"
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.max_concurrency) as pool:
        results = list(pool.map(lambda _: one(url, args.random_output_len), range(args.num_prompts)))
    duration = time.perf_counter() - started
    latencies = [r[0] for r in results]
    row = {"backend": args.backend, "completed": len(results), "duration": duration,
           "request_throughput": len(results) / duration, "output_throughput": sum(r[1] for r in results) / duration,
           "median_e2e_latency_ms": statistics.median(latencies) * 1000, "median_ttft_ms": statistics.median(latencies) * 1000,
           "median_itl_ms": 0.0, "max_concurrency": args.max_concurrency}
    with open(args.output_file, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    print(f"double bench: {len(results)} requests in {duration:.2f} s")


if __name__ == "__main__":
    main()
