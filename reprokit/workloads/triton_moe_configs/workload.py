"""The triton-moe-configs step: defaults and tuned files of the pinned sglang, sized per arch, fitting files out.

Parameters (``with:``): ``sglang`` (the pin), ``wheel`` (staged by the control plane; else the cache or the
package index), ``archs`` (default sm120, sm90), ``config_dirs`` (the ``triton_*`` folders to read; default
all), ``compile`` (true: compile each configuration with the host's Triton and judge on the compiled bytes;
false: the formula only), ``from_device`` and ``device_name`` (the tuned files to rewrite for SM120 and the
device name the rewritten files carry), ``hidden_size``, ``top_k``, ``jobs``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, count_progress, progress, write_json_atomic
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.triton_moe_configs import configs as upstream
from reprokit.workloads.triton_moe_configs import predict
from reprokit.workloads.triton_smem import compile as triton_compile
from reprokit.workloads.triton_smem import kernels

KERNEL = "fused_moe_kernel"
DEFAULTS = {"archs": ["sm120", "sm90"], "config_dirs": None, "compile": True, "from_device": "NVIDIA_H200",
            "device_name": "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", "hidden_size": 4096, "top_k": 8,
            "jobs": None, "emit_arch": "sm120"}
MISMATCHES_SHOWN = 20


def _key(entry: dict[str, Any]) -> tuple:
    return (entry["dtype"], tuple(entry["block_shape"] or ()), entry["per_channel_quant"],
            tuple(sorted(entry["config"].items())))


def _entries(wheel: Path, dirs: list[str] | None) -> tuple[list[dict[str, Any]], list[upstream.TunedFile], list[str]]:
    defaults = [{**d, "per_channel_quant": False} for d in upstream.default_configs(wheel)]
    files, unread = upstream.tuned_files(wheel)
    if dirs is not None:
        known = sorted({f.triton_dir for f in files})
        unknown = [d for d in dirs if d not in known]
        if unknown:
            raise WorkloadError(Exit.BAD_PARAMS, f"config_dirs {unknown} are not in the wheel; it has {', '.join(known)}")
        files = [f for f in files if f.triton_dir in dirs]
    return defaults, files, unread


def _fitting(config: dict[str, int], dtype: str | None, arch: str, limit: int) -> dict[str, int] | None:
    """The configuration with the fewest changes that the formula fits: fewer stages, then half the K block."""
    candidate = dict(config)
    while (predict.predicted_shared_bytes(candidate, dtype, arch) or 0) > limit:
        stages = predict.options(candidate)["num_stages"]
        if stages > 2:
            candidate["num_stages"] = stages - 1
        elif candidate["BLOCK_SIZE_K"] > 16:
            candidate["BLOCK_SIZE_K"] //= 2
        else:
            return None
    return candidate


class Sizer:
    """Bytes of each distinct configuration per arch: the formula always, the compile when asked for."""

    def __init__(self, wheel: Path, params: dict[str, Any], out_dir: Path):
        self.wheel, self.params, self.archs = wheel, params, list(params["archs"])
        self.compiled: dict[tuple, dict[str, Any]] = {}
        self.module = None
        if params["compile"]:
            if triton_compile.triton_version() is None:
                raise WorkloadError(Exit.MISSING_DEPENDENCY, "triton is not installed for this Python; install the"
                                    " Triton the host serves with, or set `compile: false` for the formula alone")
            self.module, _ = kernels.write_module(wheel, upstream.KERNEL_SOURCE, out_dir)

    def compile(self, entries: list[dict[str, Any]]) -> None:
        if self.module is None:
            return
        todo = {(_key(e), arch): e for e in entries for arch in self.archs if (_key(e), arch) not in self.compiled}
        tasks = []
        for (_, arch), e in todo.items():
            swap = self.swap_ab(e, arch)
            args = predict.kernel_args(e["config"], e["dtype"], e["block_shape"], e["per_channel_quant"], swap,
                                       2 * int(e.get("n") or 512), int(self.params["hidden_size"]), int(self.params["top_k"]))
            tasks.append((str(self.module), KERNEL, args, predict.options(e["config"]), arch))
        progress(f"triton-moe-configs: compiling {len(tasks)} configurations x archs with Triton {triton_compile.triton_version()}")
        results = triton_compile.compile_all(tasks, self.params["jobs"],
                                             lambda done, total, r: count_progress("triton-moe-configs compile", done, total, r["arch"]))
        for key, result in zip(todo, results):
            self.compiled[key] = result

    def swap_ab(self, entry: dict[str, Any], arch: str) -> bool:
        """sglang swaps A and B for FP8 only, where its own rule says so for the arch."""
        return entry["dtype"] == "fp8_w8a8" and upstream.swap_ab(self.wheel, arch, entry["config"])

    def size(self, entry: dict[str, Any], arch: str) -> dict[str, Any]:
        limit = SMEM_OPTIN_BYTES_BY_ARCH[arch]
        predicted = predict.predicted_shared_bytes(entry["config"], entry["dtype"], arch, self.swap_ab(entry, arch))
        row: dict[str, Any] = {"limit_bytes": limit, "predicted_bytes": predicted,
                               "predicted_fits": None if predicted is None else predicted <= limit}
        compiled = self.compiled.get((_key(entry), arch))
        if compiled is not None:
            row["compiled_bytes"] = compiled.get("shared_bytes")
            row["compile_error"] = compiled.get("error")
        measured = row.get("compiled_bytes", predicted)
        row["fits"] = None if measured is None else measured <= limit
        return row


def _entry(f: upstream.TunedFile, batch: str, config: dict[str, int]) -> dict[str, Any]:
    return {"file": f.member, "batch": batch, "n": f.n, "dtype": f.dtype,
            "block_shape": list(f.block_shape) if f.block_shape else None, "per_channel_quant": f.per_channel_quant,
            "config": config}


def _formula_agreement(sizer: Sizer, entries: list[dict[str, Any]]) -> dict[str, Any]:
    by_arch = {}
    for arch in sizer.archs:
        rows = [(e, sizer.size(e, arch)) for e in {_key(e): e for e in entries}.values()]
        compared = [(e, r) for e, r in rows if r.get("compiled_bytes") is not None and r["predicted_bytes"] is not None]
        wrong = [{"dtype": e["dtype"], "block_shape": e["block_shape"], "per_channel_quant": e["per_channel_quant"],
                  "config": e["config"], "predicted_bytes": r["predicted_bytes"], "compiled_bytes": r["compiled_bytes"]}
                 for e, r in compared if r["predicted_bytes"] != r["compiled_bytes"]]
        verdict_differs = [w for w in wrong if (w["predicted_bytes"] <= SMEM_OPTIN_BYTES_BY_ARCH[arch])
                           != (w["compiled_bytes"] <= SMEM_OPTIN_BYTES_BY_ARCH[arch])]
        by_arch[arch] = {"distinct_configs": len(rows), "compared": len(compared), "exact": len(compared) - len(wrong),
                         "fit_verdict_differs": len(verdict_differs), "mismatches": wrong[:MISMATCHES_SHOWN]}
    return by_arch


def _emit(files: list[upstream.TunedFile], sizer: Sizer, params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """For each tuned file of ``from_device``: the same file for ``device_name``, each overflowing config refit."""
    arch, limit = params["emit_arch"], SMEM_OPTIN_BYTES_BY_ARCH[params["emit_arch"]]
    written, changes, unfit = [], [], []
    for f in (f for f in files if f.device_name == params["from_device"]):
        fitted = {}
        for batch, config in f.configs.items():
            row = sizer.size(_entry(f, batch, config), arch)
            if row["fits"] is not False:
                fitted[batch] = config
                continue
            replacement = _fitting(config, f.dtype, arch, limit)
            if replacement is None:
                unfit.append(f"{f.member} M={batch}")
                continue
            fitted[batch] = replacement
            changes.append({"file": f.name, "batch": batch, "from": config, "to": replacement, "from_bytes": row.get(
                "compiled_bytes", row["predicted_bytes"])})
        name = re.sub(r"device_name=[^,.]+(?=[,.])", f"device_name={params['device_name']}", f.name, count=1)
        path = out_dir / f"{arch}-configs" / f.triton_dir / name
        write_json_atomic(path, fitted)
        written.append(path.relative_to(out_dir).as_posix())
    return {"from_device": params["from_device"], "device_name": params["device_name"], "arch": arch,
            "files": written, "changed_configs": changes, "changed_count": len(changes), "unfittable": unfit}


def _params(params: dict[str, Any]) -> dict[str, Any]:
    merged = {**DEFAULTS, **{k: v for k, v in params.items() if v is not None}}
    for arch in [*merged["archs"], merged["emit_arch"]]:
        if arch not in SMEM_OPTIN_BYTES_BY_ARCH:
            raise WorkloadError(Exit.BAD_PARAMS, f"arch {arch!r}: use one of {', '.join(SMEM_OPTIN_BYTES_BY_ARCH)}")
    if merged["emit_arch"] not in merged["archs"]:
        merged["archs"] = [*merged["archs"], merged["emit_arch"]]
    return merged


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    params = _params(params)
    wheel = kernels.pinned_wheel("sglang", params.get("sglang"), params.get("wheel"))
    defaults, files, unread = _entries(wheel, params["config_dirs"])
    tuned = [_entry(f, batch, config) for f in files for batch, config in f.configs.items()]
    sizer = Sizer(wheel, params, out_dir)
    sizer.compile(defaults + tuned)
    emitted = _emit(files, sizer, params, out_dir)
    refits = [{**_entry(next(f for f in files if f.name == c["file"]), c["batch"], c["to"])} for c in emitted["changed_configs"]]
    sizer.compile(refits)  # the rewritten configurations, compiled too: the emitted files are checked, not assumed
    for change, entry in zip(emitted["changed_configs"], refits):
        row = sizer.size(entry, emitted["arch"])
        change["to_bytes"] = row.get("compiled_bytes", row["predicted_bytes"])
        change["to_fits"] = row["fits"]
    for d in defaults:
        d["by_arch"] = {arch: sizer.size(d, arch) for arch in sizer.archs}
    overflow = {arch: sorted({e["file"] for e in tuned if sizer.size(e, arch)["fits"] is False}) for arch in sizer.archs}
    return {
        "sglang": params.get("sglang"), "wheel": wheel.name, "wheel_sha256": wheels.sha256_file(wheel),
        "triton": triton_compile.triton_version(), "compiled": sizer.module is not None, "archs": sizer.archs,
        "limits_bytes": {arch: SMEM_OPTIN_BYTES_BY_ARCH[arch] for arch in sizer.archs},
        "defaults": defaults,
        "defaults_overflowing": {arch: [d["when"] for d in defaults if d["by_arch"][arch]["fits"] is False]
                                 for arch in sizer.archs},
        "tuned": {"files": len(files), "configs": len(tuned), "unread": unread,
                  "config_dirs": sorted({f.triton_dir for f in files}),
                  "files_overflowing": {arch: len(names) for arch, names in overflow.items()},
                  "configs_overflowing": {arch: sum(sizer.size(e, arch)["fits"] is False for e in tuned)
                                          for arch in sizer.archs},
                  "overflowing_files": overflow},
        "formula": _formula_agreement(sizer, defaults + tuned) if sizer.module is not None else None,
        "emitted": emitted,
        "emitted_all_fit": all(c["to_fits"] for c in emitted["changed_configs"]),
    }
