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
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads import answers, serve
from reprokit.workloads.contract import Exit, WorkloadError, main, progress
from reprokit.workloads.facts.serve_params import VLLM_DEFAULTS
from reprokit.workloads.serve_log import ServerLogWatch
from reprokit.workloads.serve_stats import performance

DEFAULTS = VLLM_DEFAULTS  # reprokit/workloads/facts/serve_params.py
BENCH_KEYS = {"completed": "completed", "request_throughput": "request_throughput",
              "output_throughput": "output_throughput", "median_ttft_ms": "median_ttft_ms",
              "median_itl_ms": "median_itl_ms", "median_e2el_ms": "median_e2e_latency_ms"}  # vLLM's name -> serve's


def merged_params(params: dict[str, Any]) -> dict[str, Any]:
    return {**DEFAULTS, **params, "bench": {**DEFAULTS["bench"], **(params.get("bench") or {})}}


def server_command(params: dict[str, Any], vllm: str) -> list[str]:
    """``vllm serve MODEL`` with the kit's parameters (options of vLLM 0.2x's ``EngineArgs`` and frontend)."""
    if not params.get("model"):
        raise WorkloadError(Exit.BAD_PARAMS, "serve-vllm needs 'model': a model path on the host (or a hub id)")
    argv = [vllm, "serve", str(params["model"]), "--tensor-parallel-size", str(params["tp"]),
            "--moe-backend", str(params["moe_backend"]),
            "--gpu-memory-utilization", str(params["gpu_memory_utilization"]),
            "--max-num-seqs", str(params["max_num_seqs"]), "--host", "127.0.0.1", "--port", str(params["port"])]
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


def check_answers(port: int, model: str, load_format: str | None) -> dict[str, Any]:
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
    model, port = str(merged["model"]), int(merged["port"])
    if model.startswith("/") and not (Path(model) / "config.json").is_file():
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"model {model} has no config.json here")
    env = dict(os.environ, **{str(k): str(v) for k, v in (merged.get("env") or {}).items()})
    progress(f"serve-vllm: {' '.join(argv)}")
    telemetry = serve.Telemetry(float(merged["telemetry_interval_s"]))
    telemetry.start()
    started = time.monotonic()
    with open(out_dir / "server.log", "wb") as log:
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)
        except OSError as exc:
            raise WorkloadError(Exit.MISSING_DEPENDENCY, f"cannot start the server ({argv[0]}): {exc.strerror}") from None
        try:
            server_log = ServerLogWatch(out_dir / "server.log")
            outcome, waited_s = serve.wait_ready(proc, port, float(merged["ready_timeout_s"]), server_log)
            progress(f"serve-vllm: {outcome} after {waited_s:.0f} s")
            ready_after_s = round(waited_s, 1) if outcome == "ready" else None
            smoke_result = bench_rows = answers_result = None
            if outcome == "ready":
                smoke_result = smoke(port, model, str(merged["smoke_prompt"]))
                progress(f"serve-vllm: smoke request {'ok' if smoke_result['ok'] else 'failed'} in {smoke_result['latency_s']} s")
                answers_result = check_answers(port, model, merged.get("load_format"))
                (out_dir / "answers.log").write_text("\n".join(answers.log_lines(answers_result)) + "\n")
                if answers_result["ok"] is False:
                    outcome = "ready_answering_wrong"
                    progress(f"serve-vllm: ready but answering wrong: {answers_result['first_wrong']}")
                bench_rows = bench(vllm, port, model, merged["bench"], out_dir, telemetry.started_at)
        finally:
            server_exit = proc.returncode if proc.poll() is not None else None
            stopped_exit = serve.stop(proc)
            telemetry.stop_event.set()
            telemetry.join(timeout=15)
    return {
        "command": argv, "env": sorted((merged.get("env") or {}).keys()), "outcome": outcome,
        "ready": outcome in ("ready", "ready_answering_wrong"), "ready_after_s": ready_after_s,
        "waited_s": round(waited_s, 1), "server_exit_code_before_stop": server_exit,
        "server_exit_code": stopped_exit, "smoke": smoke_result, "answers": answers_result, "bench": bench_rows,
        "telemetry": telemetry.summary(), "performance": performance(bench_rows, telemetry.samples, ready_after_s),
        "duration_s": round(time.monotonic() - started, 1), "server_log": "server.log",
        "fatal_line": server_log.fatal.to_json() if server_log.fatal else None,
    }


if __name__ == "__main__":
    sys.exit(main("serve-vllm", run))
