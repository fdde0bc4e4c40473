"""FlashInfer's tactics blocklist (``FLASHINFER_TACTICS_BLOCKLIST``, 0.6.15+), written without a GPU and loaded back
with FlashInfer's own loader.

FlashInfer's generator (``flashinfer generate-tactics-blocklist``) finds the failing tactics by launching them on
the GPU. Here they come from the static analysis (the fit table); the file has the format of the release's own
``tactics_blocklist.py``: ``{"_metadata": {...}, "invalid_tactics": {"<custom_op>::<RunnerClass>": [tactic, ...]}}``.
Its loader skips a file whose metadata disagrees with the running environment, key by key (``"*"`` matches
anything), so the file pins ``flashinfer_version`` (tactic numbers are per release) and leaves the rest ``"*"``
unless a GPU name is given.

``verify`` loads the file with that release's ``TacticsBlocklist.load`` and ``filter``, taken verbatim from the
wheel, in a fresh interpreter. Importing ``flashinfer`` needs torch and CUDA, so the package is rebuilt around the
module: the names it imports from ``.autotuner`` are the wheel's own definitions (cut out with ``ast``), except
``_collect_metadata``, which reads the GPU through torch and is replaced by the environment being checked.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import StepError

BLOCKLIST_MODULE = "flashinfer/tactics_blocklist.py"
AUTOTUNER_MODULES = ("flashinfer/autotuner/autotuner.py", "flashinfer/autotuner.py")
FUSED_MOE_CORE = "flashinfer/fused_moe/core.py"
ENV_VAR = "FLASHINFER_TACTICS_BLOCKLIST"
VERIFY_TIMEOUT_S = 60


@dataclass(frozen=True)
class BlocklistFormat:
    """What one release's wheel says about its blocklist: whether it reads one, and the keys it expects."""

    reads_blocklist: bool
    evidence: str  # where the wheel reads the environment variable, or why it does not
    metadata_keys: tuple[str, ...]  # what _collect_metadata() returns, in its order
    metadata_key: str  # the top-level key of the metadata ("_metadata")
    runner_class: str | None  # the TunableRunner of the CUTLASS fused MoE (its class name is part of the key)
    custom_ops: tuple[str, ...]  # the ops it tunes ("trtllm::fused_moe::gemm1", ...)


def read_member(wheel: Path, member: str) -> str | None:
    with zipfile.ZipFile(wheel) as zf:
        try:
            return zf.read(member).decode("utf-8")
        except KeyError:
            return None


def autotuner_source(wheel: Path) -> tuple[str, str]:
    for member in AUTOTUNER_MODULES:
        text = read_member(wheel, member)
        if text is not None:
            return member, text
    raise StepError(f"{wheel.name}: no flashinfer autotuner module ({' or '.join(AUTOTUNER_MODULES)})")


def blocklist_format(wheel: Path) -> BlocklistFormat:
    """Read from the wheel whether its autotuner reads FLASHINFER_TACTICS_BLOCKLIST, and the file's keys."""
    member, autotuner = autotuner_source(wheel)
    core = read_member(wheel, FUSED_MOE_CORE) or ""
    runner = re.search(r"class\s+(\w+)\s*\(\s*TunableRunner\s*\)\s*:", core)
    ops = tuple(dict.fromkeys(re.findall(r"choose_one\(\s*\"(trtllm::fused_moe::\w+)\"", core)))
    line = next((n for n, text in enumerate(autotuner.splitlines(), 1) if f'"{ENV_VAR}"' in text), None)
    module = read_member(wheel, BLOCKLIST_MODULE)
    if line is None or module is None:
        evidence = f"{member} never reads {ENV_VAR}" if line is None else f"the wheel has no {BLOCKLIST_MODULE}"
        return BlocklistFormat(False, evidence, (), "_metadata", runner.group(1) if runner else None, ops)
    tree = ast.parse(autotuner)
    keys: list[str] = []
    metadata_key = "_metadata"
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_collect_metadata":
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Assign) and isinstance(sub.targets[0], ast.Subscript)
                        and isinstance(sub.targets[0].slice, ast.Constant)):
                    keys.append(sub.targets[0].slice.value)
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "_METADATA_KEY" and isinstance(node.value, ast.Constant)):
            metadata_key = node.value.value
    if not keys:
        raise StepError(f"{wheel.name}: {member} has no _collect_metadata() with meta[...] keys; "
                        "this release's blocklist format is not known to reprokit")
    return BlocklistFormat(True, f"{member}:{line} reads os.environ[{ENV_VAR!r}]", tuple(dict.fromkeys(keys)),
                           metadata_key, runner.group(1) if runner else None, ops)


def blocklist_document(version: str, fmt: BlocklistFormat, failing: dict[str, list[int]],
                       gpu: str | None = None, note: str = "") -> dict[str, Any]:
    """The file's content: the failing tactics per op, metadata pinned to the release (and the GPU when given)."""
    if fmt.runner_class is None:
        raise StepError(f"flashinfer {version}: fused_moe/core.py names no TunableRunner class; cannot key the blocklist")
    metadata = {key: "*" for key in fmt.metadata_keys}
    metadata["flashinfer_version"] = version
    if gpu:
        metadata["gpu"] = gpu
    metadata["generator"] = "reprokit static shared-memory analysis (no GPU)" + (f"; {note}" if note else "")
    invalid = {f"{op}::{fmt.runner_class}": sorted(tactics) for op, tactics in failing.items() if tactics}
    return {fmt.metadata_key: metadata, "invalid_tactics": invalid}


VERIFY_PROGRAM = r"""
import json, logging, sys
logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(message)s", stream=sys.stderr)
from flashinfer.tactics_blocklist import TacticsBlocklist
request = json.loads(sys.argv[1])
blocklist = TacticsBlocklist()
loaded = blocklist.load(request["path"])
kept = {}
for key, tactics in request["tactics"].items():
    custom_op, runner_class = key.rsplit("::", 1)
    runner = type(runner_class, (), {})()
    kept[key] = blocklist.filter(custom_op, runner, list(tactics))
print(json.dumps({"loaded": loaded, "summary": blocklist.summary(), "kept": kept}))
"""


def _standalone_package(wheel: Path, root: Path, environment: dict[str, str]) -> None:
    """``flashinfer/`` with the wheel's tactics_blocklist.py and its own helpers from the autotuner."""
    module = read_member(wheel, BLOCKLIST_MODULE)
    if module is None:
        raise StepError(f"{wheel.name}: has no {BLOCKLIST_MODULE}")
    _, autotuner = autotuner_source(wheel)
    wanted: list[str] = []
    for node in ast.parse(module).body:
        if isinstance(node, ast.ImportFrom) and node.module == "autotuner" and node.level == 1:
            wanted += [alias.name for alias in node.names]
    pieces = ["# cut from the wheel's autotuner by reprokit (the rest of it needs torch)", "from typing import Any"]
    tree = ast.parse(autotuner)
    for name in wanted:
        if name == "_collect_metadata":
            pieces.append(f"def _collect_metadata():\n    return {environment!r}  # the environment being checked")
            continue
        node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.Assign)) and
                     (getattr(n, "name", None) == name or
                      any(isinstance(t, ast.Name) and t.id == name for t in getattr(n, "targets", [])))), None)
        if node is None:
            raise StepError(f"{wheel.name}: tactics_blocklist.py imports {name} from the autotuner, which does not define it")
        pieces.append(ast.get_source_segment(autotuner, node))
    package = root / "flashinfer"
    (package / "jit").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "autotuner.py").write_text("\n\n".join(pieces) + "\n")
    (package / "jit" / "__init__.py").write_text("")
    (package / "jit" / "core.py").write_text('import logging\nlogger = logging.getLogger("flashinfer.jit")\n')
    (package / "tactics_blocklist.py").write_text(module)


def verify(wheel: Path, path: Path, environment: dict[str, str], tactics: dict[str, list[int]]) -> dict[str, Any]:
    """Load ``path`` with the wheel's own TacticsBlocklist and filter ``tactics`` ({"op::Runner": [...]}) through it."""
    with tempfile.TemporaryDirectory(prefix="reprokit-blocklist-") as tmp:
        _standalone_package(wheel, Path(tmp), environment)
        request = json.dumps({"path": str(path), "tactics": tactics})
        done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {tmp!r})\n{VERIFY_PROGRAM}",
                               request], capture_output=True, text=True, timeout=VERIFY_TIMEOUT_S)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StepError(f"{wheel.name}: its TacticsBlocklist could not load {path}: {last}")
    result = json.loads(done.stdout)
    result["log"] = [line for line in done.stderr.splitlines() if "[TacticsBlocklist]" in line]
    return result
