"""The cute-dsl-smem step: a CuTe-DSL kernel class of a pinned wheel, its stage counts and shared storage per case.

Parameters (``with:``): ``package`` and ``version`` (the pin), ``wheel`` (staged by the control plane), ``source``
(the kernel's file in the wheel), ``kernel`` (its class), ``setup`` (the method that sets the stage counts, called
with each case's ``setup_args``), ``init`` (the constructor's arguments), ``attributes`` (what ``__call__`` sets
from its tensors before setup: element types by name), ``struct`` (the ``@cute.struct`` class of its shared
storage), ``bind`` (the struct's free names: ``{a_smem_staged: a_smem_layout_staged}``, attributes of the kernel),
``archs``, ``cases`` (each a ``name`` and what it changes of ``init``, ``setup_args``, ``struct``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, progress
from reprokit.workloads.cute_dsl_smem import extract, host_model
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.triton_smem import kernels

REQUIRED = ("package", "version", "source", "kernel", "setup", "struct", "cases")
CASE_KEYS = {"name", "why", "init", "setup_args", "struct", "model"}


def _dtype(name: Any, where: str) -> host_model.Numeric:
    numeric = host_model.DTYPE_NAMES.get(str(name), str(name))
    if numeric not in host_model.NUMERICS:
        raise WorkloadError(Exit.BAD_PARAMS, f"{where}: {name!r} is not an element type; use one of"
                            f" {', '.join(host_model.DTYPE_NAMES)}")
    return host_model.NUMERICS[numeric]


def _cases(params: dict[str, Any]) -> list[dict[str, Any]]:
    cases = params["cases"]
    if not isinstance(cases, list) or not cases:
        raise WorkloadError(Exit.BAD_PARAMS, "`cases` must be a list of {name, init, setup_args, struct}")
    seen = set()
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            raise WorkloadError(Exit.BAD_PARAMS, f"cases[{index}]: needs a `name`")
        unknown = set(case) - CASE_KEYS
        if unknown:
            raise WorkloadError(Exit.BAD_PARAMS, f"cases[{index}] ({case['name']}): unknown keys {sorted(unknown)};"
                                f" a case takes {', '.join(sorted(CASE_KEYS))}")
        if case["name"] in seen:
            raise WorkloadError(Exit.BAD_PARAMS, f"cases[{index}]: the case name {case['name']!r} is used twice")
        seen.add(case["name"])
    return cases


def size_case(params: dict[str, Any], case: dict[str, Any], read: Any, arch: str) -> dict[str, Any]:
    """One case on one arch: the kernel built and set up by upstream's code on the model, its storage summed."""
    namespace = host_model.namespace()
    namespace["utils"] = host_model.Utils()
    modules: dict[str, extract.Module] = {}
    package = str(params["package"]).replace("-python", "").replace("-", "_")
    cls = extract.load_class(modules, str(params["source"]), str(params["kernel"]), package, read, namespace)
    init = {**(params.get("init") or {}), **(case.get("init") or {})}
    init = {k: tuple(v) if isinstance(v, list) else v for k, v in init.items()}
    kernel = cls.__new__(cls)
    capacity = SMEM_OPTIN_BYTES_BY_ARCH[arch]
    cls.__init__(kernel, **init)
    kernel.smem_capacity = capacity  # the arch asked about, whatever arch the constructor names
    for name, value in (params.get("attributes") or {}).items():
        setattr(kernel, name, _dtype(value, f"attributes.{name}") if name.endswith("_dtype") else host_model.Opaque())
    setup_args = {**(params.get("setup_args") or {}), **(case.get("setup_args") or {})}
    getattr(kernel, str(params["setup"]))(**setup_args)
    struct_name = str(case.get("struct") or params["struct"])
    struct_node, _ = extract.find_struct(modules[str(params["source"])].class_def(str(params["kernel"])), struct_name)
    bound = {free: getattr(kernel, attr) for free, attr in (params.get("bind") or {}).items()}
    fields = extract.struct_fields(struct_node, {**namespace, "self": kernel, **bound})
    total = max((f["offset"] + f["bytes"] for f in fields), default=0)
    stages = {k: v for k, v in vars(kernel).items() if k.endswith("_stage") and isinstance(v, int)}
    return {"shared_bytes": total, "limit_bytes": capacity, "fits": total <= capacity, "stages": stages,
            "tile_shape_mnk": list(getattr(kernel, "tile_shape_mnk", ()) or ()), "struct": struct_name,
            "fields": fields}


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    missing = [key for key in REQUIRED if not params.get(key)]
    if missing:
        raise WorkloadError(Exit.BAD_PARAMS, f"missing parameters: {', '.join(missing)}")
    archs = list(params.get("archs") or ["sm120"])
    for arch in archs:
        if arch not in SMEM_OPTIN_BYTES_BY_ARCH:
            raise WorkloadError(Exit.BAD_PARAMS, f"arch {arch!r}: use one of {', '.join(SMEM_OPTIN_BYTES_BY_ARCH)}")
    cases = _cases(params)
    wheel = kernels.pinned_wheel(str(params["package"]), str(params["version"]), params.get("wheel"))

    def read(member: str) -> str:
        return kernels.read_member(wheel, member)

    by_case: dict[str, dict[str, Any]] = {}
    for case in cases:
        for arch in archs:
            try:
                by_case.setdefault(case["name"], {})[arch] = size_case(params, case, read, arch)
            except WorkloadError:
                raise
            except Exception as exc:  # noqa: BLE001 - upstream code the model does not cover: say where
                raise WorkloadError(Exit.BAD_PARAMS, f"case {case['name']} on {arch}: upstream's host code did not run"
                                    f" on the model: {type(exc).__name__}: {exc}") from None
            row = by_case[case["name"]][arch]
            progress(f"cute-dsl-smem: {case['name']} on {arch}: {row['shared_bytes']} B"
                     f" ({'fits' if row['fits'] else 'OVERFLOWS'} {row['limit_bytes']}), stages {row['stages']}")
    return {
        "package": params["package"], "version": params["version"], "wheel": wheel.name,
        "wheel_sha256": wheels.sha256_file(wheel), "source": params["source"], "kernel": params["kernel"],
        "archs": archs, "limits_bytes": {arch: SMEM_OPTIN_BYTES_BY_ARCH[arch] for arch in archs},
        "cases": [{k: v for k, v in c.items() if k in ("name", "why", "model", "setup_args", "init")} for c in cases],
        "by_case": by_case,
        "overflowing": {arch: [n for n, row in by_case.items() if row[arch]["fits"] is False] for arch in archs},
    }
