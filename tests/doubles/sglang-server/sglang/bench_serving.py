"""Test double of `python -m sglang.bench_serving`: real requests to the double server, sglang's result keys."""

import json
import os
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from sglang._upstream import parser

SHAREGPT_REPO_ID = "anon8231489123/ShareGPT_Vicuna_unfiltered"  # bench_serving.py of sglang 0.5.9
SHAREGPT_FILENAME = "ShareGPT_V3_unfiltered_cleaned_split.json"


def one(url, output_len):
    started = time.perf_counter()
    body = json.dumps({"text": "hello " * 8, "sampling_params": {"max_new_tokens": output_len}}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        tokens = json.loads(response.read())["meta_info"]["completion_tokens"]
    return time.perf_counter() - started, tokens


def is_file_valid_json(path):
    if not path or not os.path.isfile(path):
        return False
    try:
        with open(path) as fh:
            json.load(fh)
        return True
    except ValueError:
        return False


def main():
    args = parser("bench_serving", "bench_serving.py").parse_args()  # exits 2 on a flag 0.5.9 does not have
    if args.dataset_name in (None, "sharegpt", "random") and not is_file_valid_json(args.dataset_path):
        # sglang 0.5.9 samples these prompts from ShareGPT and downloads it from Hugging Face here
        # (sample_random_requests: random_sample=args.dataset_name == "random"); the double has no network either
        print("Traceback (most recent call last):\n  (sglang test double of bench_serving.sample_random_requests)")
        print(f"huggingface_hub.errors.LocalEntryNotFoundError: {SHAREGPT_REPO_ID}/{SHAREGPT_FILENAME}: dataset"
              f" {args.dataset_name!r} without --dataset-path needs a download from Hugging Face, and this host is offline")
        sys.exit(1)
    for name in ("port", "random_input_len", "random_output_len", "num_prompts", "max_concurrency"):
        setattr(args, name, int(getattr(args, name)))
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
