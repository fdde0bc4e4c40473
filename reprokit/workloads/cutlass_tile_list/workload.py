"""The cutlass-tile-list step. Parameters (``with:``): ``package``/``version`` (the pin) and ``wheel``; ``source``
(the header that lists the tiles) and ``list`` (the vector's name, ``tiles``); ``launcher`` (the header whose
``std::conditional_t<COND, StageCount<N>, ...>`` fixes stages); ``a_bytes``/``b_bytes`` (bytes per element of A
and B), ``sf_vec_size`` and ``sf_bytes`` (one scale factor per that many K elements); ``epilogue_bytes`` (the kernel's
epilogue storage, which only a compile gives: with it a row has the kernel's bytes and its fit is judged on them);
``archs``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, progress
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.triton_smem import kernels

REQUIRED = ("package", "version", "source", "launcher", "a_bytes", "b_bytes", "sf_vec_size")
BARRIER_BYTES = 16  # one pipeline barrier per stage (CUTLASS's PipelineTmaAsync storage)
STAGE_STORAGE_ALIGN_BYTES = 1024  # the mainloop's stage buffers are alignas(1024) (TMA's 128 B swizzle atoms)
FIXED_STAGES = re.compile(r"std::conditional_t<\s*(?P<cond>[^,]+?),\s*cutlass::gemm::collective::StageCount<(?P<n>\d+)>",
                          re.S)
SAFE_CONDITION = re.compile(r"^[\sCTA_MNK0-9=!<>|&()]+$")


def candidate_tiles(header: str, name: str, where: str) -> list[tuple[int, int, int]]:
    """``(M, N, K bytes)`` of each ``CtaShape<M>x<N>x<K>B`` in the vector ``name``, in order."""
    match = re.search(rf"std::vector<\w+>\s+{re.escape(name)}\s*=\s*\{{(?P<body>.*?)\}};", header, re.S)
    if not match:
        raise WorkloadError(Exit.BAD_PARAMS, f"{where} has no `std::vector<...> {name} = {{...}};`; check `list`")
    body = re.sub(r"//[^\n]*", "", match.group("body"))
    tiles = [tuple(int(x) for x in m) for m in re.findall(r"CtaShape(\d+)x(\d+)x(\d+)B", body)]
    if not tiles:
        raise WorkloadError(Exit.BAD_PARAMS, f"{where}: `{name}` names no CtaShape<M>x<N>x<K>B tile")
    return tiles  # type: ignore[return-value]


def fixed_stage_rule(launcher: str, where: str) -> tuple[str, int] | None:
    """The launcher's ``(condition, stages)`` for tiles whose stage count is fixed, or None (all automatic)."""
    match = FIXED_STAGES.search(launcher.replace("\\\n", "\n"))
    if not match:
        return None
    condition = " ".join(match.group("cond").replace("\\", " ").split())
    if not SAFE_CONDITION.match(condition):
        raise WorkloadError(Exit.BAD_PARAMS, f"{where}: the stage condition {condition!r} is not a comparison of"
                            " CTA_M_/CTA_N_/CTA_K_ this step can read")
    return condition, int(match.group("n"))


def stages_of(rule: tuple[str, int] | None, tile: tuple[int, int, int]) -> int | None:
    if rule is None:
        return None
    condition = rule[0].replace("||", " or ").replace("&&", " and ")
    values = {"CTA_M_": tile[0], "CTA_N_": tile[1], "CTA_K_": tile[2]}
    return rule[1] if eval(condition, {"__builtins__": {}}, values) else None  # noqa: S307 - checked by SAFE_CONDITION


def row(index: int, tile: tuple[int, int, int], stages: int | None, params: dict[str, Any], limit: int) -> dict[str, Any]:
    m, n, k_bytes = tile
    k = k_bytes // int(params["a_bytes"])  # the enum counts K in bytes of A
    sf = (m * k + n * k) // int(params["sf_vec_size"]) * int(params.get("sf_bytes", 1))
    stage_bytes = m * k * int(params["a_bytes"]) + n * k * int(params["b_bytes"]) + sf + BARRIER_BYTES
    mainloop = None if stages is None else -(-stages * stage_bytes // STAGE_STORAGE_ALIGN_BYTES) * STAGE_STORAGE_ALIGN_BYTES
    epilogue = params.get("epilogue_bytes")
    kernel = None if mainloop is None or epilogue is None else mainloop + int(epilogue)
    judged = mainloop if kernel is None else kernel
    return {"tile": f"{m}x{n}x{k}", "tactics": [2 * index, 2 * index + 1], "stages": stages if stages else "auto",
            "stage_bytes": stage_bytes, "mainloop_bytes": mainloop, "kernel_bytes": kernel, "limit_bytes": limit,
            "overflows": None if judged is None else judged > limit}


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    missing = [key for key in REQUIRED if not params.get(key)]
    if missing:
        raise WorkloadError(Exit.BAD_PARAMS, f"missing parameters: {', '.join(missing)}")
    archs = list(params.get("archs") or ["sm120"])
    unknown = [a for a in archs if a not in SMEM_OPTIN_BYTES_BY_ARCH]
    if unknown:
        raise WorkloadError(Exit.BAD_PARAMS, f"arch {unknown[0]!r}: use one of {', '.join(SMEM_OPTIN_BYTES_BY_ARCH)}")
    wheel = kernels.pinned_wheel(str(params["package"]), str(params["version"]), params.get("wheel"))
    source, launcher = str(params["source"]), str(params["launcher"])
    tiles = candidate_tiles(kernels.read_member(wheel, source), str(params.get("list") or "tiles"), f"{wheel.name}:{source}")
    rule = fixed_stage_rule(kernels.read_member(wheel, launcher), f"{wheel.name}:{launcher}")
    by_arch = {arch: [row(i, t, stages_of(rule, t), params, SMEM_OPTIN_BYTES_BY_ARCH[arch]) for i, t in enumerate(tiles)]
               for arch in archs}
    for arch, rows in by_arch.items():
        over = [r["tile"] for r in rows if r["overflows"]]
        progress(f"cutlass-tile-list: {len(rows)} tiles on {arch}; over {rows[0]['limit_bytes']} B:"
                 f" {', '.join(over) or 'none'}")
    return {
        "package": params["package"], "version": params["version"], "wheel": wheel.name,
        "wheel_sha256": wheels.sha256_file(wheel), "source": source, "launcher": launcher,
        "tiles": [f"{m}x{n}x{k // int(params['a_bytes'])}" for m, n, k in tiles],
        "fixed_stages": None if rule is None else {"condition": rule[0], "stages": rule[1]},
        "archs": archs, "by_arch": by_arch,
        "overflowing": {arch: [r["tile"] for r in rows if r["overflows"]] for arch, rows in by_arch.items()},
        "overflowing_tactics": {arch: [t for r in rows if r["overflows"] for t in r["tactics"]]
                                for arch, rows in by_arch.items()},
    }
