"""The ``@triton.jit`` functions of one file of an upstream wheel, as an importable module, or a package of the wheel.

Upstream kernel files import their package (``sglang.srt.utils``) for the Python launchers; the
kernels themselves need only ``triton`` and ``triton.language``. The module written here keeps the
file's triton imports, its ``@triton.jit`` functions verbatim (``ast.unparse``), and nothing else, so
what compiles is upstream's kernel code without upstream's package.

A kernel whose ``@triton.jit`` helpers live in other modules of its package (triton_kernels' ``_matmul_ogs``)
cannot be cut out of one file: ``extract_package`` writes that package's directory of the wheel out whole, to
be imported under its own name.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.static_smem import wheel as wheels


def pinned_wheel(package: str, version: str | None, given: str | None) -> Path:
    """The wheel staged for the step (``given``), else this host's cache, else the package index (once)."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise WorkloadError(Exit.MISSING_DEPENDENCY, f"wheel {path} does not exist")
        return path
    if not version:
        raise WorkloadError(Exit.BAD_PARAMS, f"give the pinned {package} release or its `wheel`")
    cache = wheels.default_cache_dir() / "wheels"
    cached = cache / wheels.wheel_file_name(str(version), package)
    return cached if cached.is_file() else wheels.download(package, str(version), cache)


def read_member(wheel: Path, member: str) -> str:
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(member).decode("utf-8")
    except KeyError:
        raise WorkloadError(Exit.BAD_PARAMS, f"{wheel.name} has no {member}; check the step's `source`") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{wheel}: not a readable wheel ({exc})") from None


def _is_jit(node: ast.FunctionDef) -> bool:
    return any(ast.unparse(d).split("(")[0] in ("triton.jit", "jit") for d in node.decorator_list)


def _imports_triton(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return all(alias.name.split(".")[0] == "triton" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton"


# The names a package's own re-export of Triton gives (vLLM's ``from vllm.triton_utils import tl, triton``), and
# the import each stands for: the kernels use them as Triton's own.
TRITON_REEXPORTS = {"triton": "import triton", "tl": "import triton.language as tl"}


def _reexported_triton(node: ast.stmt) -> list[ast.stmt] | None:
    """``from PACKAGE.triton_utils import tl, triton`` as the triton imports it re-exports, else None."""
    if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
            and node.module.split(".")[0] != "triton" and node.names
            and all(alias.name in TRITON_REEXPORTS and alias.asname is None for alias in node.names)):
        return None
    return [ast.parse(TRITON_REEXPORTS[alias.name]).body[0] for alias in node.names]


# Keywords of ``@triton.jit(...)`` that act at launch, not at compile: ``launch_metadata`` names a host function
# for the profiler (sglang's persistent matmul), which the extracted module does not keep.
LAUNCH_ONLY_JIT_KEYWORDS = frozenset({"launch_metadata"})


def _without_launch_hooks(node: ast.stmt) -> ast.stmt:
    """A ``@triton.jit`` function with its decorators' launch-only keywords dropped (compiles the same)."""
    if isinstance(node, ast.FunctionDef):
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call):
                decorator.keywords = [k for k in decorator.keywords if k.arg not in LAUNCH_ONLY_JIT_KEYWORDS]
    return node


def _module_free_defaults(node: ast.FunctionDef) -> ast.FunctionDef:
    """Defaults read from the file's other globals (vLLM's ``FP8_MIN = float8_info.min``) become ``None``.

    Those globals are host code (torch, the platform), which the extracted module does not keep, so such a
    default cannot be evaluated here; the kit gives the argument instead (``args``), as the launcher's value.
    """
    def free(expr: ast.expr) -> bool:
        return any(isinstance(n, ast.Name) and n.id not in ("triton", "tl") for n in ast.walk(expr))

    node.args.defaults = [ast.Constant(None) if free(d) else d for d in node.args.defaults]
    node.args.kw_defaults = [None if d is None else ast.Constant(None) if free(d) else d for d in node.args.kw_defaults]
    return node


def jit_source(source: str, origin: str) -> tuple[str, list[str]]:
    """The module text with only the triton imports and ``@triton.jit`` functions of ``source``, and their names."""
    tree = ast.parse(source)
    kept: list[ast.stmt] = []
    for node in tree.body:
        reexported = _reexported_triton(node)
        if reexported is not None:
            kept += reexported
        elif _imports_triton(node) or (isinstance(node, ast.FunctionDef) and _is_jit(node)):
            kept.append(_module_free_defaults(_without_launch_hooks(node)) if isinstance(node, ast.FunctionDef)
                        else node)
    names = [n.name for n in kept if isinstance(n, ast.FunctionDef)]
    header = f'"""The @triton.jit functions of {origin}, extracted verbatim by reprokit."""\n\n'
    return header + ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n", names


def write_module(wheel: Path, member: str, out_dir: Path) -> tuple[Path, list[str]]:
    """Write the kernels of ``member`` to ``out_dir/kernels/<name>.py`` (kept in the record); return path and names."""
    text, names = jit_source(read_member(wheel, member), f"{wheel.name}:{member}")
    if not names:
        raise WorkloadError(Exit.BAD_PARAMS, f"{wheel.name}:{member} defines no @triton.jit function")
    path = out_dir / "kernels" / (Path(member).stem + ".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path, names


def load_module(path: Path) -> ModuleType:
    """Import the written module under a name unique to its content (Triton keys its cache on the source)."""
    name = f"reprokit_kernels_{Path(path).stem}_{hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton.jit looks the module up for the kernel's globals
    spec.loader.exec_module(module)
    return module


def extract_package(wheel: Path, root: str, import_name: str, dest: Path) -> Path:
    """Write the wheel's files under ``root`` to ``dest/import_name`` (a package importable from ``dest``); return it."""
    prefix = root.rstrip("/") + "/"
    target = dest / import_name
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [name for name in zf.namelist() if name.startswith(prefix) and not name.endswith("/")]
            if not members:
                raise WorkloadError(Exit.BAD_PARAMS, f"{wheel.name} has no files under {prefix}; check the step's"
                                    " `package_root`")
            for name in members:
                path = target / name[len(prefix):]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(zf.read(name))
    except (OSError, zipfile.BadZipFile) as exc:
        raise WorkloadError(Exit.MISSING_DEPENDENCY, f"{wheel}: not a readable wheel ({exc})") from None
    return target


def module_name(root: str, import_name: str, source: str) -> str:
    """The dotted name ``source`` (a file under ``root``) has once ``root`` is imported as ``import_name``."""
    prefix = root.rstrip("/") + "/"
    if not source.startswith(prefix) or not source.endswith(".py"):
        raise WorkloadError(Exit.BAD_PARAMS, f"`source` {source} is not a .py file under `package_root` {root}")
    parts = source[len(prefix):-3].split("/")
    return ".".join([import_name, *(parts[:-1] if parts[-1] == "__init__" else parts)])
