"""Serve with vLLM: ``vllm serve`` with the kit's flags and environment, watched until ready, smoke-tested,
answers checked and benchmarked (``vllm bench serve``) through vLLM's OpenAI API, GPUs sampled, then stopped.

The same step as ``serve`` (sglang) with vLLM's command lines and endpoints: readiness is ``GET /health``, the
smoke request and the checked answers are ``POST /v1/completions`` (greedy), the benchmark is vLLM's own client
on random token ids (``--dataset-name random`` needs no download in vLLM, unlike sglang 0.5.9's), its result the
JSON file it saves. The server's output goes to ``server.log`` for the triage; the wait, the telemetry, the stop
and the result's shape are the sglang step's (``serve``), so the report and the expectations read both alike.

Standard library only. Usage: ``python -m reprokit.workloads.serve_vllm --params P.json --out-dir DIR``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads import answers, serve
from reprokit.workloads.contract import Exit, WorkloadError, main, progress
from reprokit.workloads.facts.serve_params import VLLM_DEFAULTS

DEFAULTS = VLLM_DEFAULTS  # reprokit/workloads/facts/serve_params.py
# (parameter, flag) in the order the command line has them; a parameter that is null is left out.
OPTIONAL_FLAGS = (("moe_backend", "--moe-backend"), ("gpu_memory_utilization", "--gpu-memory-utilization"),
                  ("max_num_seqs", "--max-num-seqs"), ("dtype", "--dtype"), ("max_model_len", "--max-model-len"))
BENCH_KEYS = {"completed": "completed", "request_throughput": "request_throughput",
              "output_throughput": "output_throughput", "median_ttft_ms": "median_ttft_ms",
              "median_itl_ms": "median_itl_ms", "median_e2el_ms": "median_e2e_latency_ms"}  # vLLM's name -> serve's


def merged_params(params: dict[str, Any]) -> dict[str, Any]:
    return {**DEFAULTS, **params, "bench": {**DEFAULTS["bench"], **(params.get("bench") or {})}}


def server_command(params: dict[str, Any], vllm: str) -> list[str]:
    """``vllm serve MODEL`` with the kit's parameters (options of vLLM 0.2x's ``EngineArgs`` and frontend)."""
    if not params.get("model"):
        raise WorkloadError(Exit.BAD_PARAMS, "serve-vllm needs 'model': a model path on the host (or a hub id)")
    argv = [vllm, "serve", str(params["model"]), "--tensor-parallel-size", str(params["tp"])]
    for key, flag in OPTIONAL_FLAGS:  # null in the kit: the engine's default (vLLM's CPU build has no MoE backend)
        if params.get(key) is not None:
            argv += [flag, str(params[key])]
    argv += ["--host", "127.0.0.1", "--port", str(params["port"])]
    if params.get("enforce_eager"):
        argv.append("--enforce-eager")
    if params.get("enable_expert_parallel"):
        argv.append("--enable-expert-parallel")
    if params.get("quantization"):
        argv += ["--quantization", str(params["quantization"])]
    if params.get("load_format"):
        argv += ["--load-format", str(params["load_format"])]
    return argv + [str(a) for a in params.get("extra_args") or []]


def bench_command(vllm: str, port: int, model: str, settings: dict[str, Any], concurrency: int, out_dir: Path) -> list[str]:
    """vLLM's benchmark client on random token ids against the served model; its result saved as one JSON file."""
    return [vllm, "bench", "serve", "--backend", "vllm", "--host", "127.0.0.1", "--port", str(port),
            "--model", model, "--dataset-name", "random", "--random-input-len", str(settings["input_len"]),
            "--random-output-len", str(settings["output_len"]),
            "--num-prompts", str(settings["num_prompts_per_concurrency"] * concurrency),
            "--max-concurrency", str(concurrency), "--ignore-eos", "--save-result", "--result-dir", str(out_dir),
            "--result-filename", f"bench-c{concurrency}.json"]


def completion(port: int, model: str, prompt: str, max_tokens: int) -> tuple[int, dict[str, Any] | None]:
    status, body = serve.http("POST", f"http://127.0.0.1:{port}/v1/completions",
                              {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0},
                              timeout_s=300)
    try:
        return status, json.loads(body) if status == 200 else None
    except ValueError:
        return status, None


def smoke(port: int, model: str, prompt: str) -> dict[str, Any]:
    started = time.monotonic()
    status, answer = completion(port, model, prompt, 32)
    result: dict[str, Any] = {"http_status": status, "latency_s": round(time.monotonic() - started, 3)}
    choices = (answer or {}).get("choices") or [{}]
    result["text"] = str(choices[0].get("text", ""))[:500] if answer else None
    result["completion_tokens"] = ((answer or {}).get("usage") or {}).get("completion_tokens")
    result["ok"] = status == 200 and bool(result["text"])
    return result


def check_answers(port: int, model: str, load_format: str | None, check: bool | None = True) -> dict[str, Any]:
    if check is False:
        return answers.summarize([], skipped="check_answers: false in the kit (a model that cannot answer, e.g. random"
                                 " weights); answers are not judged")

    def generate(prompt: str, max_new_tokens: int) -> str | None:
        status, answer = completion(port, model, prompt, max_new_tokens)
        return str(((answer or {}).get("choices") or [{}])[0].get("text", "")) if answer else None

    return answers.check(generate, load_format)


def bench(vllm: str, port: int, model: str, settings: dict[str, Any], out_dir: Path, clock_start: float) -> list[dict[str, Any]]:
    rows = []
    for concurrency in settings["concurrencies"]:
        argv = bench_command(vllm, port, model, settings, concurrency, out_dir)
        progress(f"serve-vllm: benchmark at concurrency {concurrency}")
        t_start_s = round(time.monotonic() - clock_start, 2)
        with open(out_dir / f"bench-c{concurrency}.log", "wb") as log:
            try:
                code = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=settings["timeout_s"]).returncode
            except subprocess.TimeoutExpired:
                code = None
        row: dict[str, Any] = {"concurrency": concurrency, "exit_code": code, "t_start_s": t_start_s,
                               "t_end_s": round(time.monotonic() - clock_start, 2)}
        saved = out_dir / f"bench-c{concurrency}.json"
        if saved.is_file():
            try:
                figures = json.loads(saved.read_text())
            except ValueError:
                figures = {}
            row.update({ours: figures.get(theirs) for theirs, ours in BENCH_KEYS.items()})
        rows.append(row)
    return rows


def find_vllm(params: dict[str, Any]) -> str:
    given = params.get("vllm")
    found = given if given and Path(given).is_file() else shutil.which(str(given or "vllm"))
    if not found:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, "vllm is not installed here (no `vllm` on the PATH); run this"
                            " step in the kit's serve image (runtime: docker) or install the pinned vLLM on the host")
    return found


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    merged = merged_params(params)
    vllm = find_vllm(merged)
    argv = server_command(merged, vllm)
    model = str(merged["model"])
    if model.startswith("/") and not (Path(model) / "config.json").is_file():
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"model {model} has no config.json here")
    engine = serve.Engine(
        label="serve-vllm",
        smoke=lambda port: smoke(port, model, str(merged["smoke_prompt"])),
        answers=lambda port: check_answers(port, model, merged.get("load_format"), merged.get("check_answers")),
        bench=lambda port, clock_start: bench(vllm, port, model, merged["bench"], out_dir, clock_start),
    )
    return serve.session(argv, merged, out_dir, engine)


if __name__ == "__main__":
    sys.exit(main("serve-vllm", run))
