"""The static-smem workload's parameters, checked: what ``params.json`` may say and what each field means."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.facts.tiles import parse_tile
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.static_smem.targets import ARCHES, DTYPES, GEMM_OPS, OUTPUT_DTYPES, ArchTarget, MoeDtype

MAX_JOBS = 8  # nvcc jobs at once at most by default (one per core up to this); each CUTLASS probe takes ~2 GB
PARAM_KEYS = {"flashinfer", "arch", "dtype", "output_dtypes", "variants", "probe_result", "optin_limit_bytes",
              "cache_dir", "jobs", "nvcc", "wheel"}



@dataclass(frozen=True)
class Options:
    flashinfer: str
    arch: ArchTarget
    dtype: MoeDtype
    outputs: dict[str, str]
    variants: tuple[str | int, ...]
    optin_limit_bytes: int | None
    optin_source: str | None
    cache_dir: Path
    jobs: int
    nvcc: str | None
    wheel: Path | None

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Options:
        unknown = sorted(set(params) - PARAM_KEYS)
        if unknown:
            raise WorkloadError(Exit.BAD_PARAMS, f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(PARAM_KEYS))}")
        version = params.get("flashinfer")
        if not isinstance(version, str) or not version:
            raise WorkloadError(Exit.BAD_PARAMS, 'param `flashinfer` (the flashinfer-python version, e.g. "0.6.3") is required')
        probe_arch, optin, optin_source = None, None, None
        if params.get("probe_result"):
            probe_arch, optin = _read_probe_result(Path(params["probe_result"]))
            optin_source = f"probe_result {params['probe_result']}"
        if params.get("optin_limit_bytes") is not None:
            optin = params["optin_limit_bytes"]
            if not isinstance(optin, int) or isinstance(optin, bool) or optin <= 0:
                raise WorkloadError(Exit.BAD_PARAMS, f"optin_limit_bytes must be a positive integer, got {optin!r}")
            optin_source = "param optin_limit_bytes"
        arch_name = params.get("arch", "sm120")
        if arch_name == "host":
            if probe_arch is None:
                raise WorkloadError(Exit.BAD_PARAMS, "arch: host needs param `probe_result` (the smem-probe result.json) to know the GPU")
            arch_name = probe_arch
        if arch_name not in ARCHES:
            raise WorkloadError(Exit.BAD_PARAMS, f"arch {arch_name!r} is not analysed; known: {', '.join(ARCHES)} or host")
        dtype_name = params.get("dtype", "nvfp4")
        if dtype_name not in DTYPES:
            raise WorkloadError(Exit.BAD_PARAMS, f"dtype {dtype_name!r} is not analysed; known: {', '.join(DTYPES)}")
        allowed_outputs = DTYPES[dtype_name].output_dtypes
        output_names = params.get("output_dtypes", list(allowed_outputs))
        if not isinstance(output_names, list) or not output_names or any(o not in allowed_outputs for o in output_names):
            raise WorkloadError(Exit.BAD_PARAMS, f"output_dtypes must be a non-empty list of {', '.join(allowed_outputs)} "
                                                 f"(the outputs of {dtype_name} runners)")
        variants = params.get("variants") or []
        if not isinstance(variants, list) or not all(_valid_filter(v) for v in variants):
            raise WorkloadError(Exit.BAD_PARAMS, "variants must be a list of tiles (\"128x256x128\", in elements), "
                                                 "tactic numbers, or ops (\"gemm1\", \"gemm2\")")
        jobs = params.get("jobs") or min(MAX_JOBS, os.cpu_count() or 1)
        if not isinstance(jobs, int) or jobs < 1:
            raise WorkloadError(Exit.BAD_PARAMS, f"jobs must be a positive integer, got {jobs!r}")
        return cls(
            flashinfer=version,
            arch=ARCHES[arch_name],
            dtype=DTYPES[dtype_name],
            outputs={name: OUTPUT_DTYPES[name] for name in output_names},
            variants=tuple(variants),
            optin_limit_bytes=optin,
            optin_source=optin_source,
            cache_dir=Path(params["cache_dir"]) if params.get("cache_dir") else wheels.default_cache_dir(),
            jobs=jobs,
            nvcc=params.get("nvcc"),
            wheel=Path(params["wheel"]) if params.get("wheel") else None,
        )

    def selects(self, entry: dict[str, Any]) -> bool:
        if not self.variants:
            return True
        for wanted in self.variants:
            if isinstance(wanted, int) and wanted == entry["tactic"]:
                return True
            if isinstance(wanted, str) and (wanted == entry["tile"] or GEMM_OPS.get(_op_number(wanted)) == entry["op"]):
                return True
        return False


def _op_number(name: str) -> int | None:
    return {"gemm1": 1, "gemm2": 2, GEMM_OPS[1]: 1, GEMM_OPS[2]: 2}.get(name)


def _valid_filter(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    if isinstance(value, str):
        if _op_number(value):
            return True
        try:
            parse_tile(value)
            return True
        except ValueError:
            return False
    return False


def _read_probe_result(path: Path) -> tuple[str | None, int | None]:
    """The GPU arch and the smallest opt-in shared memory per block from an smem-probe result.json."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        drivers = [d["driver"] for d in data["devices"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise WorkloadError(Exit.BAD_PARAMS, f"probe_result {path}: not an smem-probe result.json with devices ({exc})") from None
    arches = sorted({d.get("gpu_arch") for d in drivers if d.get("gpu_arch")})
    if len(arches) > 1:
        raise WorkloadError(Exit.BAD_PARAMS, f"probe_result {path}: GPUs of several archs ({', '.join(arches)}); pass `arch`")
    limits = [d["max_shared_memory_per_block_optin_bytes"] for d in drivers
              if isinstance(d.get("max_shared_memory_per_block_optin_bytes"), int)]
    return (arches[0] if arches else None), (min(limits) if limits else None)
