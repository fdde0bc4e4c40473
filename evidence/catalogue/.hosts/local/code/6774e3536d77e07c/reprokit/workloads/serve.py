"""Serve: launch sglang with the kit's flags, watch it come up, smoke-test, benchmark, sample the GPUs, stop it.

Runs on the GPU host (in the serve image). The server's output goes to
``server.log`` in the step directory, which the control plane's triage reads
for autotune failures and fatal errors. While it waits, this workload reads
only the log's phase marks (``serve_log``): it says which phase the start is
in and stops at the first fatal line (outcome ``fatal``). Otherwise it
observes: the process (alive or exited), ``/health`` (readiness), one generate
request (smoke), sglang's own benchmark client at a few concurrencies, and
``nvidia-smi`` telemetry sampled throughout.

Standard library only. Usage: ``python -m reprokit.workloads.serve --params P.json --out-dir DIR``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.workloads import answers
from reprokit.workloads.contract import Exit, WorkloadError, main, progress
from reprokit.workloads.facts.serve_params import SGLANG_DEFAULTS
from reprokit.workloads.facts.serve_phases import LABELS
from reprokit.workloads.serve_log import ServerLogWatch, crash_dump
from reprokit.workloads.serve_stats import performance

DEFAULTS = SGLANG_DEFAULTS  # reprokit/workloads/facts/serve_params.py
TELEMETRY_FIELDS = ("index", "power.draw", "power.limit", "utilization.gpu", "memory.used", "clocks.sm")
STOP_GRACE_S = 30
DEATH_WAIT_S = 20  # after a failed smoke request: how long a dying server gets to exit before reprokit goes on
STILL_WAITING_NOTE_S = 60  # a phase can stay quiet for minutes (loading weights): say so now and then


def server_command(params: dict[str, Any], python: str) -> list[str]:
    """The sglang command line of the kit's parameters (flags valid from sglang 0.5.x)."""
    if not params.get("model"):
        raise WorkloadError(Exit.BAD_PARAMS, "serve needs 'model': a model path on the host (or a hub id)")
    argv = [python, "-m", "sglang.launch_server", "--model-path", str(params["model"]),
            "--tp-size", str(params["tp"]), "--ep-size", str(params["ep"]),
            "--moe-runner-backend", str(params["moe_runner_backend"]),
            "--mem-fraction-static", str(params["mem_fraction_static"]),
            "--max-running-requests", str(params["max_running_requests"]),
            "--host", "127.0.0.1", "--port", str(params["port"])]
    if params.get("quantization"):
        argv += ["--quantization", str(params["quantization"])]
    if params.get("load_format"):
        argv += ["--load-format", str(params["load_format"])]
    return argv + [str(a) for a in params.get("extra_args") or []]


def http(method: str, url: str, body: dict | None = None, timeout_s: float = 5.0) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


class Telemetry(threading.Thread):
    """Samples power, utilisation, memory and SM clock of every GPU with nvidia-smi until stopped."""

    def __init__(self, interval_s: float):
        super().__init__(daemon=True)
        self.interval_s = interval_s
        self.samples: list[dict[str, Any]] = []
        self.stop_event = threading.Event()
        self.nvidia_smi = shutil.which("nvidia-smi")
        self.error: str | None = None if self.nvidia_smi else "nvidia-smi is not on the PATH"
        self.started_at = time.monotonic()

    def run(self) -> None:
        while self.nvidia_smi and not self.stop_event.is_set():
            try:
                out = subprocess.run([self.nvidia_smi, f"--query-gpu={','.join(TELEMETRY_FIELDS)}",
                                      "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
                t_s = round(time.monotonic() - self.started_at, 2)
                for line in out.stdout.strip().splitlines():
                    values = [v.strip() for v in line.split(",")]
                    if len(values) == len(TELEMETRY_FIELDS):
                        self.samples.append({"t_s": t_s, "gpu": int(values[0]), "power_w": _num(values[1]),
                                             "power_limit_w": _num(values[2]), "util_pct": _num(values[3]),
                                             "mem_used_mib": _num(values[4]), "sm_clock_mhz": _num(values[5])})
            except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
                self.error = f"{type(exc).__name__}: {exc}"
            self.stop_event.wait(self.interval_s)

    def summary(self) -> dict[str, Any]:
        per_gpu: dict[int, dict[str, Any]] = {}
        for sample in self.samples:
            gpu = per_gpu.setdefault(sample["gpu"], {"gpu": sample["gpu"], "samples": 0, "max_power_w": 0.0,
                                                      "power_limit_w": sample["power_limit_w"], "util_sum": 0.0})
            gpu["samples"] += 1
            gpu["max_power_w"] = max(gpu["max_power_w"], sample["power_w"] or 0.0)
            gpu["util_sum"] += sample["util_pct"] or 0.0
        for gpu in per_gpu.values():
            gpu["mean_util_pct"] = round(gpu.pop("util_sum") / max(gpu["samples"], 1), 1)
        return {"available": self.nvidia_smi is not None and bool(self.samples), "error": self.error,
                "interval_s": self.interval_s, "per_gpu": sorted(per_gpu.values(), key=lambda g: g["gpu"]),
                "samples": self.samples}


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]"


def wait_ready(proc: subprocess.Popen, port: int, timeout_s: float, log: ServerLogWatch) -> tuple[str, float]:
    """'ready' once /health answers 200; 'fatal' at the log's first fatal line (``log.fatal``), alive or not;
    'exited' if the server dies without one; 'timeout' otherwise. Says each new phase the log shows."""
    started = time.monotonic()
    last_note = started
    while time.monotonic() - started < timeout_s:
        exited = proc.poll() is not None
        notes = log.read()  # after poll: an exited server's last lines are in the log
        for note in notes:
            progress(f"serve: {note}")
        if log.fatal is not None:
            return "fatal", time.monotonic() - started
        if exited:
            return "exited", time.monotonic() - started
        status, _ = http("GET", f"http://127.0.0.1:{port}/health", timeout_s=5)
        if status == 200:
            return "ready", time.monotonic() - started
        if notes:
            last_note = time.monotonic()
        elif time.monotonic() - last_note > STILL_WAITING_NOTE_S:
            last_note = time.monotonic()
            progress(f"serve: still {LABELS[log.phase]} after {last_note - started:.0f} s"
                     f" (/health answered {status or 'nothing'})")
        time.sleep(1.0)
    return "timeout", time.monotonic() - started


def smoke(port: int, prompt: str) -> dict[str, Any]:
    started = time.monotonic()
    status, body = http("POST", f"http://127.0.0.1:{port}/generate",
                        {"text": prompt, "sampling_params": {"max_new_tokens": 32, "temperature": 0}}, timeout_s=300)
    result: dict[str, Any] = {"http_status": status, "latency_s": round(time.monotonic() - started, 3)}
    try:
        answer = json.loads(body)
        result["text"] = str(answer.get("text", ""))[:500]
        result["completion_tokens"] = (answer.get("meta_info") or {}).get("completion_tokens")
    except ValueError:
        result["text"] = None
    result["ok"] = status == 200 and bool(result.get("text"))
    return result


def bench_command(python: str, port: int, settings: dict[str, Any], concurrency: int, output: Path) -> list[str]:
    """sglang's benchmark client on random token ids.

    ``random-ids``, not ``random``: in sglang 0.5.9 ``random`` samples its prompts from ShareGPT and downloads
    it from Hugging Face unless ``--dataset-path`` names the file (``bench_serving.py``,
    ``random_sample=args.dataset_name == "random"``), which an offline GPU host cannot do.
    """
    return [python, "-m", "sglang.bench_serving", "--backend", "sglang", "--host", "127.0.0.1", "--port", str(port),
            "--dataset-name", "random-ids", "--random-input-len", str(settings["input_len"]),
            "--random-output-len", str(settings["output_len"]),
            "--num-prompts", str(settings["num_prompts_per_concurrency"] * concurrency),
            "--max-concurrency", str(concurrency), "--output-file", str(output)]


def bench(python: str, port: int, settings: dict[str, Any], out_dir: Path, clock_start: float = 0.0) -> list[dict[str, Any]]:
    """sglang's own benchmark client (random token ids) at each concurrency; its JSON lines are kept as artifacts."""
    rows = []
    for concurrency in settings["concurrencies"]:
        output = out_dir / f"bench-c{concurrency}.jsonl"
        argv = bench_command(python, port, settings, concurrency, output)
        progress(f"serve: benchmark at concurrency {concurrency}")
        t_start_s = round(time.monotonic() - clock_start, 2)  # on the telemetry's clock: its samples of this window
        with open(out_dir / f"bench-c{concurrency}.log", "wb") as log:
            try:
                code = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=settings["timeout_s"]).returncode
            except subprocess.TimeoutExpired:
                code = None
        row: dict[str, Any] = {"concurrency": concurrency, "exit_code": code, "t_start_s": t_start_s,
                               "t_end_s": round(time.monotonic() - clock_start, 2)}
        if output.exists() and output.read_text().strip():
            last = json.loads(output.read_text().strip().splitlines()[-1])
            for key in ("completed", "request_throughput", "output_throughput", "median_ttft_ms", "median_itl_ms",
                        "median_e2e_latency_ms"):
                row[key] = last.get(key)
        rows.append(row)
    return rows


def _wait_exit(proc: subprocess.Popen, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


def stop(proc: subprocess.Popen) -> int | None:
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    return proc.returncode


@dataclass(frozen=True)
class Engine:
    """What differs between the engines the serve steps start: their requests to a ready server.

    ``smoke(port)`` -> the smoke result, ``answers(port)`` -> ``answers.summarize``'s, ``bench(port, clock_start)``
    -> the benchmark rows. The rest of a serve (start, wait, stop, telemetry, the result's shape) is ``session``'s,
    the same for every engine.
    """

    label: str
    smoke: Callable[[int], dict[str, Any]]
    answers: Callable[[int], dict[str, Any]]
    bench: Callable[[int, float], list[dict[str, Any]]]


def session(argv: list[str], merged: dict[str, Any], out_dir: Path, engine: Engine) -> dict[str, Any]:
    """Start the server, wait for it, ask it what ``engine`` asks, stop it: the serve step's result."""
    port = int(merged["port"])
    env = dict(os.environ, **{str(k): str(v) for k, v in (merged.get("env") or {}).items()})
    progress(f"{engine.label}: {' '.join(argv)}")
    telemetry = Telemetry(float(merged["telemetry_interval_s"]))
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
            outcome, waited_s = wait_ready(proc, port, float(merged["ready_timeout_s"]), server_log)
            progress(f"{engine.label}: {outcome} after {waited_s:.0f} s")
            ready_after_s = round(waited_s, 1) if outcome == "ready" else None  # a dead server was never ready
            smoke_result = bench_rows = answers_result = None
            if outcome == "ready":
                smoke_result = engine.smoke(port)
                progress(f"{engine.label}: smoke request {'ok' if smoke_result['ok'] else 'failed'}"
                         f" in {smoke_result['latency_s']} s")
                answers_result = engine.answers(port)
                (out_dir / "answers.log").write_text("\n".join(answers.log_lines(answers_result)) + "\n")
                if answers_result["ok"] is False:  # up, and answering wrong: its own outcome
                    outcome = "ready_answering_wrong"
                    progress(f"{engine.label}: ready but answering wrong: {answers_result['first_wrong']}")
                if not smoke_result["ok"]:  # a failed first request may be the server dying: let it, on its own
                    _wait_exit(proc, DEATH_WAIT_S)
                if proc.poll() is None:
                    bench_rows = engine.bench(port, telemetry.started_at)
                else:  # died under the first requests: a benchmark would only wait for its timeouts
                    progress(f"{engine.label}: the server exited (code {proc.returncode}); no benchmark")
        finally:
            server_exit = proc.returncode if proc.poll() is not None else None
            stopped_at = time.monotonic()
            stopped_exit = stop(proc)
            stop_s = round(time.monotonic() - stopped_at, 1)
            telemetry.stop_event.set()
            telemetry.join(timeout=15)
    return {
        "command": argv,
        "env": sorted((merged.get("env") or {}).keys()),
        "outcome": outcome,
        "ready": outcome in ("ready", "ready_answering_wrong"),
        "ready_after_s": ready_after_s,
        "waited_s": round(waited_s, 1),
        "server_exit_code_before_stop": server_exit,
        "server_exit_code": stopped_exit,
        "stopped_by_reprokit": server_exit is None,  # alive until stop(): its SIGTERM, not a death
        "stop_s": stop_s,
        "smoke": smoke_result,
        "answers": answers_result,
        "bench": bench_rows,
        "telemetry": telemetry.summary(),
        "performance": performance(bench_rows, telemetry.samples, ready_after_s),
        "duration_s": round(time.monotonic() - started, 1),
        "server_log": "server.log",
        "fatal_line": server_log.fatal.to_json() if server_log.fatal else None,
        "crash_dump": crash_dump(out_dir / "server.log"),
    }


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    merged = {**DEFAULTS, **params, "bench": {**DEFAULTS["bench"], **(params.get("bench") or {})}}
    python = merged.get("python") or sys.executable
    check = subprocess.run([python, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('sglang') is None)"],
                           capture_output=True)
    if check.returncode != 0:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"sglang is not installed for {python}; run this step in the kit's"
                            " serve image (runtime: docker) or install the pinned sglang on the host")
    argv = server_command(merged, python)
    model = str(merged["model"])
    if model.startswith("/") and not (Path(model) / "config.json").is_file():
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"model {model} has no config.json here"
                            + (" (inside the container: the host's models_dir is mounted read-only at the same path"
                               " only when it exists on the host)" if Path("/.dockerenv").exists() else ""))
    engine = Engine(
        label="serve",
        smoke=lambda port: smoke(port, str(merged["smoke_prompt"])),
        answers=lambda port: answers.check_server(port, http, merged.get("load_format")),
        bench=lambda port, clock_start: bench(python, port, merged["bench"], out_dir, clock_start),
    )
    return session(argv, merged, out_dir, engine)


if __name__ == "__main__":
    sys.exit(main("serve", run))
