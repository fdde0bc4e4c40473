"""The static prediction checked on a real GPU: FlashInfer's CUTLASS fused MoE, every tactic forced, then its autotuner.

On the GPU host (torch and the flashinfer wheel installed), within one deadline:

1. build the reduced SM90 module (``reduced_module``: the release's JitSpec with one dtype's sources), timed, with
   ninja's progress when it does not finish; the build directory is FlashInfer's own JIT workspace
   (``FLASHINFER_WORKSPACE_BASE``; keep it outside a tree that is copied afresh per run), so a second run
   straight after continues it;
2. the tactics pass (``device_passes tactics``) under the CUPTI injection library ``cxx/smem_trace.cpp``, compiled
   here against the host's CUPTI: per tactic, launched or not and the dynamic shared memory the launch asked for;
3. the autotuner passes (``device_passes autotune``): without a blocklist, with each given blocklist
   (``FLASHINFER_TACTICS_BLOCKLIST``), and with ``skip_ops``; each pass's DEBUG log is kept and read for the
   tactics the autotuner profiled.

With ``--predicted`` (a static-smem result.json of the same release, arch and dtype) each tactic is set beside its
prediction (``cross_check``); the same function runs on the control plane over a device-check.json brought back.

    python -m reprokit.workloads.static_smem.device_check --dtype bf16 --out-dir DIR [--deadline-s 560]
        [--blocklist NAME=FILE ...] [--skip-op OP] [--predicted R.json]

Standard library, torch and flashinfer only (no control plane).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads.facts.autotuner import PROFILED_TACTIC, SKIPPED_TACTIC
from reprokit.workloads.facts.smem_fit import KernelFit

HERE = Path(__file__).resolve().parent
TRACE_SOURCE = HERE / "cxx" / "smem_trace.cpp"
BUILD_SNIPPET = """
import json, sys, time
from reprokit.workloads.static_smem import reduced_module
facts = reduced_module.install(sys.argv[1])
print(json.dumps({"facts": facts}), flush=True)
started = time.monotonic()
from flashinfer.fused_moe import core
spec = core.gen_cutlass_fused_moe_sm90_module()
spec.build()
print(json.dumps({"built": True, "build_s": round(time.monotonic() - started, 1)}), flush=True)
"""


def ninja_progress(build_dir: Path) -> dict[str, Any]:
    """What ninja finished: targets in build.ninja against entries of .ninja_log, with their compile times."""
    ninja_file = build_dir / "build.ninja"
    if not ninja_file.is_file():
        return {"objects": None, "objects_built": 0}
    targets = [line for line in ninja_file.read_text(errors="replace").splitlines() if re.match(r"build \S+\.o:", line)]
    log = build_dir / ".ninja_log"
    times: dict[str, float] = {}
    if log.is_file():
        for line in log.read_text(errors="replace").splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) >= 4 and parts[3].endswith(".o"):
                times[Path(parts[3]).name] = round((int(parts[1]) - int(parts[0])) / 1000, 1)
    return {"objects": len(targets), "objects_built": len(times), "compile_cpu_s": round(sum(times.values()), 1),
            "longest_object_s": max(times.values(), default=0), "object_s": dict(sorted(times.items()))}


def _start(argv: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen, Any]:
    fh = open(log, "w")  # noqa: SIM115 - closed by _finish
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=fh, text=True, env=env, start_new_session=True), fh


def _finish(proc: subprocess.Popen, fh: Any, deadline: float) -> tuple[int | None, str]:
    """Wait until the deadline; then the whole process group (ninja, nvcc) gets SIGTERM, then SIGKILL."""
    try:
        out, _ = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        rc = None
    fh.close()
    return rc, out


def _run_group(argv: list[str], timeout_s: float, env: dict[str, str], log: Path) -> tuple[int | None, str]:
    proc, fh = _start(argv, env, log)
    return _finish(proc, fh, time.monotonic() + timeout_s)


def build(dtype: str, timeout_s: float, out_dir: Path) -> dict[str, Any]:
    started = time.monotonic()
    env = dict(os.environ, MAX_JOBS=os.environ.get("MAX_JOBS", "16"))
    rc, out = _run_group([sys.executable, "-c", BUILD_SNIPPET, dtype], timeout_s, env, out_dir / "build-log.txt")
    result: dict[str, Any] = {"built": False}
    for line in out.splitlines():
        if line.startswith("{"):
            result.update(json.loads(line))
    if rc is None:
        result["error"] = f"the build did not finish in {timeout_s:.0f} s (stopped; a run straight after continues it)"
    elif not result.get("built"):
        tail = (out_dir / "build-log.txt").read_text(errors="replace")[-3000:]
        result["error"] = f"exit {rc}: {tail}"
    result["wall_s"] = round(time.monotonic() - started, 1)
    if "facts" in result:
        result["ninja"] = ninja_progress(Path(result["facts"]["build_dir"]))
    if result.get("built"):
        from reprokit.workloads.static_smem.reduced_module import undefined_symbols  # noqa: PLC0415

        library = Path(result["facts"]["library"])
        result["library_bytes"] = library.stat().st_size if library.is_file() else None
        result["undefined"] = undefined_symbols(library)
    return result


def trace_library(out_dir: Path) -> tuple[Path | None, str]:
    """The CUPTI injection library, compiled on this host against its CUDA toolkit's CUPTI."""
    cuda = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")
    target = cuda / "targets" / "x86_64-linux"
    lib = Path("/tmp/reprokit-smem-trace/libsmem_trace.so")
    lib.parent.mkdir(parents=True, exist_ok=True)
    argv = ["g++", "-shared", "-fPIC", "-O2", f"-I{target / 'include'}", str(TRACE_SOURCE), f"-L{target / 'lib'}",
            "-lcupti", "-ldl", f"-Wl,-rpath,{target / 'lib'}", "-o", str(lib)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    return (lib if done.returncode == 0 else None), " ".join(argv) + ("" if done.returncode == 0 else done.stderr[-1500:])


def profiled_tactics(log_text: str) -> dict[str, Any]:
    """The tactics FlashInfer's autotuner profiled and those that failed while profiling, from its DEBUG log."""
    profiled = sorted({int(m.group(2)) for m in PROFILED_TACTIC.finditer(log_text)})
    failed = sorted({int(m.group(2)) for m in SKIPPED_TACTIC.finditer(log_text)})
    return {"profiled": profiled, "failed_while_profiling": failed,
            "profile_lines": len(PROFILED_TACTIC.findall(log_text)),
            "blocklist_lines": [line.strip()[:300] for line in log_text.splitlines() if "TacticsBlocklist" in line][:6],
            "skip_ops_lines": [line.strip()[:300] for line in log_text.splitlines() if "skip_ops" in line][:6]}


def _pass_argv(args: list[str], out_dir: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "reprokit.workloads.static_smem.device_passes", *args,
            "--out", str(out_dir / f"{name}.json")]


def _pass_result(name: str, out_dir: Path, rc: int | None, started: float) -> dict[str, Any]:
    out_json, log = out_dir / f"{name}.json", out_dir / f"{name}.log"
    result: dict[str, Any] = json.loads(out_json.read_text()) if out_json.is_file() else {}
    result.update(rc=rc, wall_s=round(time.monotonic() - started, 1))
    if rc != 0:
        result["error"] = log.read_text(errors="replace")[-2000:] if rc is not None else "stopped at the deadline"
    return result


def cross_check(predicted: dict[str, Any], forced: dict[str, Any]) -> dict[str, Any]:
    """Per tactic: predicted SharedStorage and fit beside the bytes the launch asked for and whether it launched."""
    by_tactic = {row["tactic"]: row for row in predicted["rows"]}
    rows, differences = [], []
    for row in forced["rows"]:
        guess = by_tactic.get(row["tactic"])
        requested = row.get("requested_smem_bytes") or []
        entry = {"gemm_idx": row.get("gemm_idx"), "tactic": row["tactic"], "launched": row.get("launched"),
                 "requested_smem_bytes": requested[0] if len(requested) == 1 else (requested or None),
                 "occupancy": row.get("occupancy")}
        if guess is not None:
            entry.update(tile=guess.get("tile"), fusion=guess.get("fusion"), swap_ab=guess.get("swap_ab"),
                         stages=guess.get("stages"), predicted_smem_bytes=guess.get("kernel_smem_bytes"),
                         predicted_verdict=guess.get("verdict"))
        why = []
        if guess is None:
            why.append("no prediction for this tactic")
        else:
            if (guess["verdict"] == KernelFit.FITS) != bool(row.get("launched")):
                why.append(f"predicted {guess['verdict']}, launched={row.get('launched')}")
            if guess.get("kernel_smem_bytes") is not None and requested != [guess["kernel_smem_bytes"]]:
                why.append(f"predicted {guess['kernel_smem_bytes']} B, requested {requested}")
        entry["agrees"] = not why
        if why:
            entry["difference"] = "; ".join(why)
            differences.append(entry)
        rows.append(entry)
    return {"tactics": len(rows), "agree": len(rows) - len(differences), "differences": differences, "rows": rows}


def passes(args: argparse.Namespace, deadline: float, out_dir: Path, trace_lib: Path | None) -> dict[str, Any]:
    """The tactics pass and the autotuner passes, run side by side (each its own process and log)."""
    trace = out_dir / "smem-trace.jsonl"
    tactics_env = dict(os.environ)
    if trace_lib:
        tactics_env.update(CUDA_INJECTION64_PATH=str(trace_lib), SMEM_TRACE_OUT=str(trace))
    scenarios: list[tuple[str, list[str], dict[str, str]]] = []
    tune = ["autotune", "--dtype", args.dtype, "--batch-sizes", args.batch_sizes, "--tune-max", str(args.tune_max)]
    plain = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    plain["FLASHINFER_LOGGING_LEVEL"] = "debug"
    scenarios.append(("autotune-plain", tune, plain))
    for item in args.blocklist:
        name, _, path = item.partition("=")
        scenarios.append((f"autotune-{name}", tune, {**plain, "FLASHINFER_TACTICS_BLOCKLIST": str(Path(path).resolve())}))
    for op in args.skip_op:
        scenarios.append((f"autotune-skip-{op.rsplit(':', 1)[-1]}", [*tune, "--skip-op", op], plain))
    started = time.monotonic()
    running = [(name, env, *_start(_pass_argv(argv, out_dir, name), env, out_dir / f"{name}.log"))
               for name, argv, env in scenarios]
    results: dict[str, Any] = {"tactics": tactics_attempts(args.dtype, trace, tactics_env, out_dir, deadline)}
    for name, env, proc, fh in running:
        rc, _ = _finish(proc, fh, deadline)
        result = _pass_result(name, out_dir, rc, started)
        result["environment"] = {k: env[k] for k in ("FLASHINFER_TACTICS_BLOCKLIST",) if k in env}
        result["log_read"] = profiled_tactics((out_dir / f"{name}.log").read_text(errors="replace"))
        results[name] = result
    return results


def merge_attempts(attempts: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One tactics result from the passes of several processes: the first pass's facts, every row once, in order."""
    merged = dict(attempts[0]) if attempts else {}
    merged["rows"] = sorted({row["tactic"]: row for row in rows}.values(), key=lambda row: row["tactic"])
    merged["attempts"] = [{k: a.get(k) for k in ("start", "stopped_after", "rc", "pass_s", "error")} for a in attempts]
    return merged


def tactics_attempts(dtype: str, trace: Path, env: dict[str, str], out_dir: Path, deadline: float) -> dict[str, Any]:
    """The tactics pass, restarted in a fresh process after the tactic that left the CUDA context unusable (rc 3)
    or killed its process, from the next tactic on, until every tactic has a row or the deadline."""
    rows_file = out_dir / "tactics-rows.jsonl"
    attempts: list[dict[str, Any]] = []
    start, total = 0, None
    while time.monotonic() < deadline - 10:
        name = "tactics" if start == 0 else f"tactics-from{start}"
        argv = ["tactics", "--dtype", dtype, "--trace", str(trace), "--start", str(start), "--rows", str(rows_file)]
        began = time.monotonic()
        rc, _ = _run_group(_pass_argv(argv, out_dir, name), deadline - time.monotonic(), env, out_dir / f"{name}.log")
        attempt = _pass_result(name, out_dir, rc, began)
        attempt.setdefault("start", start)
        attempts.append(attempt)
        counts = attempt.get("tactic_counts")
        total = sum(counts.values()) if counts else total
        done = [json.loads(line) for line in rows_file.read_text().splitlines()] if rows_file.is_file() else []
        last = max((row["tactic"] for row in done), default=start - 1)
        if rc is None or (rc == 0 and attempt.get("stopped_after") is None) or total is None or last + 1 >= total:
            break
        if rc != 3:  # the process died inside a tactic: that tactic gets a row saying so
            with open(rows_file, "a") as fh:
                fh.write(json.dumps({"tactic": last + 1, "launched": False, "process_died": rc,
                                     "error": attempt.get("error", "")[-300:]}) + "\n")
            last += 1
        start = last + 1
    done = [json.loads(line) for line in rows_file.read_text().splitlines()] if rows_file.is_file() else []
    return merge_attempts(attempts, done)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.device_check")
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "fp8"))
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--deadline-s", type=float, default=560, help="everything ends within this many seconds")
    parser.add_argument("--predicted", type=Path, help="static-smem result.json (same release/arch/dtype)")
    parser.add_argument("--blocklist", action="append", default=[], help="NAME=FILE: one autotuner pass with it")
    parser.add_argument("--skip-op", action="append", default=[], help="one autotuner pass with autotune(skip_ops={OP})")
    parser.add_argument("--batch-sizes", default="4,16")
    parser.add_argument("--tune-max", type=int, default=16, help="the autotuner's largest token bucket")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.deadline_s
    out_dir = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    import torch  # noqa: PLC0415

    major, minor = torch.cuda.get_device_capability()
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "capability": f"{major}.{minor}",
                              "torch": torch.__version__, "dtype": args.dtype, "max_jobs": os.environ.get("MAX_JOBS"),
                              "workspace": os.environ.get("FLASHINFER_WORKSPACE_BASE")}
    result["build"] = build(args.dtype, deadline - time.monotonic() - 10, out_dir)
    if result["build"].get("built"):
        lib, how = trace_library(out_dir)
        result["trace_library"] = {"path": str(lib) if lib else None, "build": how}
        ran = passes(args, deadline - 5, out_dir, lib)
        result["tactics"] = ran.pop("tactics")
        result["autotune"] = ran
        if args.predicted and result["tactics"].get("rows"):
            result["cross_check"] = cross_check(json.loads(args.predicted.read_text()), result["tactics"])
    (out_dir / "device-check.json").write_text(json.dumps(result, indent=1) + "\n")
    summary = {"build": {k: v for k, v in result["build"].items() if k in ("built", "build_s", "wall_s", "error")},
               "ninja": {k: v for k, v in result["build"].get("ninja", {}).items() if k != "object_s"}}
    if "tactics" in result:
        rows = result["tactics"].get("rows", [])
        summary["tactics"] = {"rows": len(rows), "launched": sum(bool(r.get("launched")) for r in rows),
                              "with_requested_bytes": sum(bool(r.get("requested_smem_bytes")) for r in rows),
                              "error": result["tactics"].get("error", "")[-600:]}
        summary["autotune"] = {k: {"profiled": len(v.get("log_read", {}).get("profiled", [])), "rc": v.get("rc"),
                                   "error": v.get("error", "")[-300:]} for k, v in result["autotune"].items()}
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
