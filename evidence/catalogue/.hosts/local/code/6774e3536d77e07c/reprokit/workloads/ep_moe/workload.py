"""``ep-moe``: FlashInfer's CUTLASS fused MoE with expert parallelism over NCCL on the host's N GPUs, every rank's
autotuner recorded, with and without a tactics blocklist, ``skip_ops`` and cross-rank tuning.

Why: the seeds' failure is an EP8 server whose eight ranks each autotune FlashInfer's MoE during warmup and log
the tactics that fail, interleaved. This step produces that log with the real library on real GPUs (one process
per GPU under ``torch.distributed.run``, NCCL between them) and says per rank which tactics were profiled, which
were skipped, which chosen, and how long tuning took, so that "the blocklist is honoured on every rank" is read
from records, not assumed. On a one-GPU host it runs with N=1: the same code, one rank.

Steps: build the release's SM90 module reduced to BF16 (``static_smem.reduced_module``, the build of the H200
check: about 430-500 s on 16 cores the first time, then loaded from FlashInfer's JIT workspace); then one launch
of every rank per scenario (``scenarios.py``), each leaving ``<scenario>/server.log`` (every rank's lines,
interleaved, as ``torch.distributed.run --tee`` prints them), ``<scenario>/rank<R>.log`` and ``rank<R>.json``.

    python -m reprokit.workloads.ep_moe --params params.json --out-dir DIR    (params: world_size, ...)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, count_progress, progress
from reprokit.workloads.ep_moe import scenarios as scenario_params
from reprokit.workloads.ep_moe.prebuilt import in_workspace, place
from reprokit.workloads.ep_moe.summary import summarise
from reprokit.workloads.static_smem.device_check import build, profiled_tactics


def _installed() -> dict[str, Any]:
    try:
        import flashinfer  # noqa: PLC0415
        import torch  # noqa: PLC0415
    except ImportError as exc:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"ep-moe needs torch and flashinfer-python on the host: {exc}") from None
    if not torch.cuda.is_available():
        raise WorkloadError(Exit.NO_DEVICE, "ep-moe: torch sees no CUDA device")
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {"flashinfer": flashinfer.__version__, "torch": torch.__version__, "devices": names,
            "arch": "sm{}{}".format(*torch.cuda.get_device_capability(0)),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def blocklist_document(blocklist: dict[str, list[int]], flashinfer_version: str) -> dict[str, Any]:
    """FlashInfer's tactics-blocklist file (``FLASHINFER_TACTICS_BLOCKLIST``), pinned to the installed release."""
    pinned = {"flashinfer_version": flashinfer_version, "cuda_version": "*", "cublas_version": "*", "cudnn_version": "*",
              "cudnn_frontend_version": "*", "gpu": "*", "generator": "reprokit ep-moe"}
    return {"_metadata": pinned, "invalid_tactics": blocklist}


def _launch(argv: list[str], env: dict[str, str], log: Path, timeout_s: float) -> int | None:
    """All ranks' launcher, its stdout and stderr in one file; at the timeout its whole process group is stopped."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return None


def flatten_rank_logs(launcher_dir: Path, scenario_dir: Path, world_size: int) -> list[str]:
    """``torch.distributed.run``'s per-rank files (``<run>/attempt_0/<rank>/stderr.log``) as ``rank<R>.log``, its tree removed."""
    written = []
    for rank in range(world_size):
        parts = sorted(launcher_dir.glob(f"*/attempt_*/{rank}/stdout.log")) + sorted(launcher_dir.glob(f"*/attempt_*/{rank}/stderr.log"))
        if parts:
            target = scenario_dir / f"rank{rank}.log"
            target.write_bytes(b"".join(p.read_bytes() for p in parts))
            written.append(target.name)
    shutil.rmtree(launcher_dir, ignore_errors=True)
    return written


def run_scenario(params: dict[str, Any], scenario: dict[str, Any], out_dir: Path, flashinfer_version: str) -> dict[str, Any]:
    world_size = params["world_size"]
    scenario_dir = out_dir / scenario["name"]
    scenario_dir.mkdir(parents=True, exist_ok=True)
    config = scenario_dir / "config.json"
    config.write_text(json.dumps(scenario_params.rank_config(params, scenario), indent=1) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("FLASHINFER_TACTICS_BLOCKLIST", scenario_params.DIST_AWARE_ENV)}
    env.update(FLASHINFER_LOGGING_LEVEL="debug", NCCL_DEBUG=params["nccl_debug"], PYTHONUNBUFFERED="1")
    if scenario.get("blocklist"):
        blocklist_file = scenario_dir / "tactics-blocklist.json"
        blocklist_file.write_text(json.dumps(blocklist_document(scenario["blocklist"], flashinfer_version), indent=1) + "\n")
        env["FLASHINFER_TACTICS_BLOCKLIST"] = str(blocklist_file)
    env.update({str(k): str(v) for k, v in (scenario.get("env") or {}).items()})
    launcher_dir = scenario_dir / "launcher"
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world_size}", "--tee=3",
            f"--log-dir={launcher_dir}", "-m", "reprokit.workloads.ep_moe.rank", "--config", str(config),
            "--out-dir", str(scenario_dir)]
    started = time.monotonic()
    rc = _launch(argv, env, scenario_dir / "server.log", params["scenario_timeout_s"])
    rank_logs = flatten_rank_logs(launcher_dir, scenario_dir, world_size)
    return {"name": scenario["name"], "rc": rc, "timed_out": rc is None, "wall_s": round(time.monotonic() - started, 1),
            "process_group": bool(scenario.get("process_group")), "env": scenario.get("env") or {},
            "blocklist": scenario.get("blocklist") or {}, "skip_ops": list(scenario.get("skip_ops") or []),
            "rank_logs": rank_logs, "ranks": read_ranks(scenario_dir, world_size)}


def read_ranks(scenario_dir: Path, world_size: int) -> list[dict[str, Any]]:
    """Each rank's own result, with what its log says it profiled (``log_read``): the log is the record the
    tactics are counted from; the rank's in-process count is kept beside it as a cross-check."""
    ranks = []
    for rank in range(world_size):
        path = scenario_dir / f"rank{rank}.json"
        result = json.loads(path.read_text()) if path.is_file() else {"rank": rank, "error": "no rank result"}
        log = scenario_dir / f"rank{rank}.log"
        result["log_read"] = profiled_tactics(log.read_text(errors="replace")) if log.is_file() else None
        ranks.append(result)
    return ranks


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    params = scenario_params.checked(params)
    host = _installed()
    if len(host["devices"]) < params["world_size"]:
        raise WorkloadError(Exit.NO_DEVICE, f"ep-moe: world_size {params['world_size']} needs that many GPUs; torch sees"
                            f" {len(host['devices'])} (CUDA_VISIBLE_DEVICES={host['cuda_visible_devices']})")
    carried = place(params["prebuilt_module"], host["flashinfer"], host["arch"]) if params.get("prebuilt_module") else None
    present = in_workspace()
    if present:  # as FlashInfer's own loader does (JitSpec.build_and_load): a library at the spec's path is loaded
        progress(f"ep-moe: the module is in FlashInfer's JIT workspace ({present['sha256'][:12]}): no build")
        built: dict[str, Any] = {"built": True, "build_s": 0, "library_bytes": present["bytes"], "in_workspace": present}
    else:
        progress("ep-moe: building FlashInfer's SM90 fused MoE (the BF16 reduced module; 330-500 s on 16 cores)")
        built = build("bf16", params["build_timeout_s"], out_dir)
    body: dict[str, Any] = {**host, "world_size": params["world_size"],
                            "problem": scenario_params.rank_config(params, {"name": "problem"}),
                            "build": {k: v for k, v in built.items() if k in ("built", "build_s", "wall_s", "error", "library_bytes",
                                                                             "in_workspace")}}
    body["build"]["prebuilt"] = carried
    if not built.get("built"):
        raise WorkloadError(Exit.CHECK_FAILED, f"ep-moe: the fused MoE module did not build: {built.get('error', '')[-300:]}", **body)
    ran = []
    for done, scenario in enumerate(params["scenarios"]):
        ran.append(run_scenario(params, scenario, out_dir, host["flashinfer"]))
        count_progress("ep-moe scenarios", done + 1, len(params["scenarios"]), scenario["name"])
    body.update(summarise(ran, params["world_size"], params["blocklist"]))
    body["scenarios"] = ran
    if not body["every_rank_reported"]:
        body["_exit"] = Exit.CHECK_FAILED
    return body

