"""A kernel step's ``archs`` and ``cases`` as a kit writes them, read once for every step that builds one kernel of a
pinned wheel per case and arch (triton-smem, tilelang-smem): ``args`` shared by the cases, each case a ``name`` and
the ``args`` it changes, and the keys its own step allows beside them."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.tile_sweep.targets import SMEM_OPTIN_BYTES_BY_ARCH


def checked_archs(params: dict[str, Any], default: list[str]) -> list[str]:
    """``archs`` (or ``default``), each one whose opt-in limit is known."""
    archs = list(params.get("archs") or default)
    for arch in archs:
        if arch not in SMEM_OPTIN_BYTES_BY_ARCH:
            raise WorkloadError(Exit.BAD_PARAMS, f"arch {arch!r}: use one of {', '.join(SMEM_OPTIN_BYTES_BY_ARCH)}")
    return archs


def full_cases(params: dict[str, Any], case_keys: Collection[str],
               check_args: Callable[[dict[str, Any], str], None] | None = None) -> list[dict[str, Any]]:
    """Each case with its full arguments: the step's ``args``, then the case's own. ``case_keys`` are the keys a case
    may have beside ``name``, ``args`` and ``why``; ``check_args(args, where)`` refuses a case's own arguments."""
    shared = params.get("args") or {}
    if not isinstance(shared, dict):
        raise WorkloadError(Exit.BAD_PARAMS, "`args` must be a mapping of the kernel's argument names to values")
    allowed = {"name", "args", *case_keys, "why"}
    cases = params["cases"]
    if not isinstance(cases, list) or not cases:
        raise WorkloadError(Exit.BAD_PARAMS, f"`cases` must be a list of {{{', '.join(sorted(allowed - {'why'}))}}}")
    names: set[str] = set()
    for index, case in enumerate(cases):
        where = f"cases[{index}]"
        if not isinstance(case, dict) or not isinstance(case.get("name"), str) or not isinstance(case.get("args"), dict):
            raise WorkloadError(Exit.BAD_PARAMS, f"{where}: needs a `name` and an `args` mapping")
        unknown = set(case) - allowed
        if unknown:
            raise WorkloadError(Exit.BAD_PARAMS, f"{where} ({case['name']}): unknown keys {sorted(unknown)}")
        if case["name"] in names:
            raise WorkloadError(Exit.BAD_PARAMS, f"{where}: the case name {case['name']!r} is used twice")
        names.add(case["name"])
        if check_args is not None:
            check_args(case["args"], f"{where} ({case['name']})")
    return [{**case, "args": {**shared, **case["args"]}} for case in cases]
