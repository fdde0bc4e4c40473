"""sglang's Triton fused-MoE configurations, read from its wheel: the shipped tuned files and the defaults.

Tuned files: ``sglang/srt/layers/moe/fused_moe_triton/configs/triton_<X_Y_Z>/E=..,N=..,device_name=..[,dtype=..]
[,block_shape=[..]][,per_channel_quant=True][_down].json``, each mapping a batch size M to a configuration.
Defaults: the dict literals of ``get_default_config`` in ``fused_moe_triton_config.py``, each with the
conditions of the ``if`` branches that lead to it, evaluated for CUDA (``_is_hip`` False). The swap of A
and B on SM90 is ``should_enable_swap_ab``'s return expression of ``fused_moe_triton_kernels.py``. All
three are read with ``ast`` from the wheel (importing sglang needs torch and a GPU stack), never retyped.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError

PACKAGE_DIR = "sglang/srt/layers/moe/fused_moe_triton/"
CONFIG_DIR = PACKAGE_DIR + "configs/"
CONFIG_SOURCE = PACKAGE_DIR + "fused_moe_triton_config.py"
KERNEL_SOURCE = PACKAGE_DIR + "fused_moe_triton_kernels.py"
FILE_RE = re.compile(
    r"^E=(?P<E>\d+),N=(?P<N>\d+),device_name=(?P<device>[^,]+?)(?:,dtype=(?P<dtype>[a-z0-9_]+))?"
    r"(?:,block_shape=\[(?P<bn>\d+), ?(?P<bk>\d+)\])?(?P<pcq>,per_channel_quant=True)?(?P<down>_down)?\.json$")
# What sglang's launcher passes when a configuration leaves them out (Triton's own defaults).
TRITON_DEFAULT_OPTIONS = {"num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class TunedFile:
    member: str  # path inside the wheel
    triton_dir: str  # e.g. "triton_3_5_1"
    experts: int
    n: int
    device_name: str
    dtype: str | None  # "fp8_w8a8", "int8_w8a16", ... or None (bf16/fp16)
    block_shape: tuple[int, int] | None
    per_channel_quant: bool
    down: bool
    configs: dict[str, dict[str, int]] = field(hash=False, compare=False)  # batch size -> configuration

    @property
    def name(self) -> str:
        return self.member.rsplit("/", 1)[-1]


def tuned_files(wheel: Path) -> tuple[list[TunedFile], list[str]]:
    """Every tuned configuration file the wheel ships, and the names it could not read (with why)."""
    found, unread = [], []
    with zipfile.ZipFile(wheel) as zf:
        for member in sorted(zf.namelist()):
            if not (member.startswith(CONFIG_DIR) and member.endswith(".json")):
                continue
            triton_dir, _, name = member[len(CONFIG_DIR):].partition("/")
            match = FILE_RE.match(name)
            if not match or "/" in name:
                unread.append(f"{member}: not named E=..,N=..,device_name=..[,dtype=..].json")
                continue
            try:
                doc = json.loads(zf.read(member))
            except ValueError as exc:
                unread.append(f"{member}: not JSON ({exc})")
                continue
            bn, bk = match["bn"], match["bk"]
            found.append(TunedFile(member, triton_dir, int(match["E"]), int(match["N"]), match["device"], match["dtype"],
                                   (int(bn), int(bk)) if bn else None, bool(match["pcq"]), bool(match["down"]), doc))
    return found, unread


_COMPARE = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
            ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
            ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


class _Evaluator:
    """A small evaluator of upstream conditions: names bound here, comparisons, and/or/not, if-expressions."""

    def __init__(self, names: dict[str, Any]):
        self.names = names

    def __call__(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise KeyError(node.id)
            return self.names[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
            return self(ast.Name(node.func.id))()
        if isinstance(node, ast.Subscript):
            return self(node.value)[self(node.slice)]
        if isinstance(node, ast.IfExp):
            return self(node.body) if self(node.test) else self(node.orelse)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self(node.operand)
        if isinstance(node, ast.BoolOp):
            values = (self(v) for v in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare):
            left = self(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = self(comparator)
                ok = _COMPARE[type(op)](left, right)
                if not ok:
                    return False
                left = right
            return True
        raise ValueError(f"cannot evaluate {ast.unparse(node)!r}")


def _function(source: str, name: str, origin: str) -> ast.FunctionDef:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{origin} has no function {name}(): this sglang keeps it elsewhere")


def _config_dicts(body: list[ast.stmt], conditions: tuple[str, ...]):
    """(conditions, dict node) for every ``config = {...}`` under ``body``, with the ``if`` tests leading to it."""
    for node in body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            if "BLOCK_SIZE_M" in keys:
                yield conditions, node.value
        elif isinstance(node, ast.If):
            test = ast.unparse(node.test)
            yield from _config_dicts(node.body, (*conditions, test))
            yield from _config_dicts(node.orelse, (*conditions, f"not ({test})"))


def default_configs(wheel: Path, block_shape: tuple[int, int] = (128, 128)) -> list[dict[str, Any]]:
    """The defaults of ``get_default_config``, each with its conditions; ``block_shape`` for block-wise FP8's."""
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read(CONFIG_SOURCE).decode("utf-8")
    function = _function(source, "get_default_config", CONFIG_SOURCE)
    evaluate = _Evaluator({"_is_hip": False, "block_shape": list(block_shape)})
    defaults = []
    for conditions, node in _config_dicts(function.body, ()):
        if any("enable_deterministic_inference" in c for c in conditions):
            continue  # a debugging mode, not what a server runs with
        config = {k.value: evaluate(v) for k, v in zip(node.keys, node.values)}
        dtype_tests = [c for c in conditions if "dtype" in c]
        dtype = "fp8_w8a8" if dtype_tests and not dtype_tests[0].startswith("not") else None
        blockwise = dtype == "fp8_w8a8" and any(c.startswith("not (block_shape is None") for c in conditions)
        when = " and ".join(f"({c})" if " or " in c else c for c in conditions) or "always"
        defaults.append({"when": when, "dtype": dtype,
                         "block_shape": list(block_shape) if blockwise else None, "config": config,
                         "line": node.lineno})
    if not defaults:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{CONFIG_SOURCE}: get_default_config() has no config literal")
    return defaults


@functools.lru_cache(maxsize=8)
def _swap_rule(wheel: Path) -> ast.expr | None:
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read(KERNEL_SOURCE).decode("utf-8")
    function = _function(source, "should_enable_swap_ab", KERNEL_SOURCE)
    returns = [n for n in function.body if isinstance(n, ast.Return)]
    return returns[-1].value if returns else None


def swap_ab(wheel: Path, arch: str, config: dict[str, int]) -> bool:
    """Whether the launch swaps A and B (FP8 only): ``should_enable_swap_ab``'s return, on CUDA, for ``arch``."""
    rule = _swap_rule(wheel)
    names = {"is_sm90_supported": lambda: arch == "sm90", "BLOCK_SIZE_M": config["BLOCK_SIZE_M"],
             "BLOCK_SIZE_N": config["BLOCK_SIZE_N"]}
    return bool(rule is not None and _Evaluator(names)(rule))
