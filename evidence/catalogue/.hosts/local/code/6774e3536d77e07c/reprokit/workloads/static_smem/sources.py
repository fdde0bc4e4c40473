"""Facts read from the wheel's own sources (never typed in here).

- the SM120 grouped-GEMM tile candidates (``get_candidate_configs_sm120`` in
  ``cutlass_heuristic.cpp``) and the tiles the dispatcher accepts
  (``SHAPE_CASE`` in ``moe_gemm_template_dispatch_tma_ws.h``);
- the nvcc flags and include directories FlashInfer's JIT uses for the MoE
  module of an arch (``flashinfer/jit/fused_moe.py``, ``jit/core.py``, ...),
  read with ``ast`` from the Python that builds them;
- how the autotuner numbers tactics (``fused_moe/core.py``
  ``MoERunner.get_valid_tactics`` and the binding's ``mAllProfiles``);
- the CUTLASS version of the bundled headers and FlashInfer's build commit.

The compiled probes (``codegen.py``) are the final word on tactics and sizes;
these parsers give the same facts without a compiler, for checks and tests.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from reprokit.workloads.facts.tiles import TileEnum, parse_enum_name

KERNELS = "data/csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels"
LAUNCHER = f"{KERNELS}/moe_gemm/launchers/moe_gemm_tma_ws_launcher.inl"
LAUNCHER_DECL = f"{KERNELS}/moe_gemm/launchers/moe_gemm_tma_ws_launcher.h"
DISPATCH_TMA_WS = f"{KERNELS}/moe_gemm/moe_gemm_template_dispatch_tma_ws.h"
DISPATCH = f"{KERNELS}/moe_gemm/moe_gemm_template_dispatch.h"
HEURISTIC = f"{KERNELS}/cutlass_heuristic.cpp"
MOE_KERNELS_H = f"{KERNELS}/include/moe_kernels.h"
BINDING = "data/csrc/fused_moe/cutlass_backend/flashinfer_cutlass_fused_moe_binding.cu"
BINDING_UP_TO_0_5_3 = "data/csrc/fused_moe/cutlass_backend/flashinfer_cutlass_fused_moe_sm100_binding.cu"
FUSED_MOE_CORE = "fused_moe/core.py"
JIT_FUSED_MOE = "jit/fused_moe.py"
JIT_CORE = "jit/core.py"
JIT_CPP_EXT = "jit/cpp_ext.py"
JIT_ENV = "jit/env.py"
COMPILATION_CONTEXT = "compilation_context.py"
CUTLASS_VERSION_H = "data/cutlass/include/cutlass/version.h"
CUTLASS_ARCH_H = "data/cutlass/include/cutlass/arch/arch.h"
BUILD_META = "_build_meta.py"
# Up to 0.5.2 the system includes and CUDA flags were built inline in this function of jit/cpp_ext.py.
OLD_NINJA_BUILDER = "generate_ninja_build_for_op"
COMMON_SOURCES = ("tllmException.cpp", "logger.cpp", "stringUtils.cpp")  # nv_internal/cpp/common

# The files whose text decides the result; their sha256 goes into every result.
KEY_FILES = (LAUNCHER, LAUNCHER_DECL, DISPATCH_TMA_WS, DISPATCH, HEURISTIC, MOE_KERNELS_H, BINDING, BINDING_UP_TO_0_5_3,
             FUSED_MOE_CORE, JIT_FUSED_MOE, CUTLASS_ARCH_H, CUTLASS_VERSION_H)


class SourceError(Exception):
    """The wheel's sources do not have the shape this analysis knows how to read."""


def read(package: Path, relative: str) -> str:
    path = package / relative
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"{relative}: cannot read it in the wheel ({exc.strerror})") from None


def binding(package: Path) -> str:
    """The CUTLASS fused-MoE binding of this wheel (it was ``..._sm100_binding.cu`` up to 0.5.3)."""
    return BINDING if (package / BINDING).is_file() or not (package / BINDING_UP_TO_0_5_3).is_file() else BINDING_UP_TO_0_5_3


def file_sha256(package: Path, relative: str) -> str:
    return hashlib.sha256((package / relative).read_bytes()).hexdigest()


# --- C++ text helpers -------------------------------------------------------

def strip_comments(code: str) -> str:
    """Remove // and /* */ comments, keeping string literals and line count."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            block = code[i:n if j < 0 else j + 2]
            out.append("\n" * block.count("\n"))
            i = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append(code[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code: str, open_index: int) -> int:
    """Index of the '}' that closes the '{' at ``open_index`` (strings skipped)."""
    depth, i, n = 0, open_index, len(code)
    while i < n:
        c = code[i]
        if c == '"':
            i += 1
            while i < n and code[i] != '"':
                i += 2 if code[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SourceError("unbalanced braces")


def function_body(code: str, name: str) -> str:
    """The body of the C++ function definition ``name(...) {...}`` (comments removed)."""
    code = strip_comments(code)
    for match in re.finditer(rf"\b{re.escape(name)}\s*\(", code):
        close = _matching_paren(code, match.end() - 1)
        rest = code[close + 1:]
        stripped = rest.lstrip()
        if stripped.startswith(("const", "{")):
            brace = code.index("{", close)
            if ";" in code[close:brace]:
                continue  # a declaration or a call
            return code[brace + 1:matching_brace(code, brace)]
    raise SourceError(f"no definition of {name}()")


def _matching_paren(code: str, open_index: int) -> int:
    depth = 0
    for i in range(open_index, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise SourceError("unbalanced parentheses")


def preprocess(code: str, defined: frozenset[str] = frozenset()) -> str:
    """Keep the branches of #ifdef/#ifndef/#if defined(...)/#else/#endif live for ``defined``."""
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # (parent live, this branch live)
    live = True
    for line in code.splitlines():
        directive = line.strip()
        if directive.startswith(("#ifdef", "#ifndef", "#if ")):
            if directive.startswith("#ifdef"):
                cond = directive.split()[1] in defined
            elif directive.startswith("#ifndef"):
                cond = directive.split()[1] not in defined
            else:
                names = re.findall(r"defined\s*\(?\s*(\w+)", directive)
                cond = bool(names) and all(n in defined for n in names) and "!" not in directive
            stack.append((live, cond))
            live = live and cond
        elif directive.startswith("#else") and stack:
            parent, cond = stack[-1]
            stack[-1] = (parent, not cond)
            live = parent and not cond
        elif directive.startswith("#endif") and stack:
            live = stack.pop()[0]
        elif live:
            out.append(line)
    return "\n".join(out)


# --- tile candidates and dispatch ---------------------------------------------

def sm120_grouped_candidates(heuristic_cpp: str) -> list[TileEnum]:
    """The grouped-GEMM NVFP4 tiles of ``get_candidate_configs_sm120``, in the order it returns them.

    0.6.3-0.6.7 push them inside ``if (config & GROUPED_GEMM)``; 0.6.8 returns one
    ``all_tiles`` list for grouped and plain GEMMs alike. FAST_BUILD is off in the
    wheels' JIT builds.
    """
    body = preprocess(function_body(heuristic_cpp, "get_candidate_configs_sm120"))
    names_in = lambda text: re.findall(r"CutlassTileConfigSM120::(CtaShape\w+)", text)  # noqa: E731
    for match in re.finditer(r"if\s*\(\s*config\s*&\s*CutlassGemmConfig::GROUPED_GEMM\s*\)\s*\{", body):
        brace = match.end() - 1
        block = body[brace:matching_brace(body, brace) + 1]
        if names_in(block):
            return [parse_enum_name(n) for n in names_in(block)]
    names = names_in(body)
    if not names:
        raise SourceError("get_candidate_configs_sm120 names no CutlassTileConfigSM120 tile")
    return [parse_enum_name(n) for n in names]


def dispatch_shape_cases(dispatch_h: str, sm: int) -> list[TileEnum]:
    """The tiles ``dispatchMoeGemmSelectTileShapeTmaWarpSpecialized`` has a SHAPE_CASE for."""
    code = strip_comments(dispatch_h)
    return [TileEnum(int(m), int(n), int(k))
            for m, n, k in re.findall(rf"SHAPE_CASE\(\s*{sm}\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", code)]


def dispatch_converts_k_bytes(dispatch_h: str) -> bool:
    """Whether SHAPE_CASE still turns the enum's K bytes into elements with (K * 8) / sizeof_bits<T>."""
    code = re.sub(r"\s+", " ", strip_comments(dispatch_h).replace("\\\n", " "))
    return bool(re.search(r"KtileBytes = \(K \* 8\) / cutlass::sizeof_bits<", code))


INSTANTIATION_MACRO = "INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM"
# The form the kernel probes instantiate (0.5.3 on): with EpilogueSchedule_, DYNAMIC_CGA_ and SWAP_AB_.
INSTANTIATION_PARAMS = 17


def check_instantiation_macro(launcher_inl: str) -> None:
    """The launcher's instantiation macro must take the arguments the kernel probes pass it."""
    match = re.search(rf"#define\s+{INSTANTIATION_MACRO}\s*\(([^)]*)\)", launcher_inl.replace("\\\n", " "))
    if not match:
        raise SourceError(f"{LAUNCHER}: no #define {INSTANTIATION_MACRO}(...)")
    params = [p.strip() for p in match.group(1).split(",") if p.strip()]
    if len(params) != INSTANTIATION_PARAMS:
        raise SourceError(f"{LAUNCHER}: {INSTANTIATION_MACRO} takes {len(params)} arguments ({', '.join(params)}); "
                          f"the kernel probes know the {INSTANTIATION_PARAMS}-argument form of FlashInfer 0.5.3 and "
                          "later (with EpilogueSchedule_, DYNAMIC_CGA_, SWAP_AB_)")


# --- tactic numbering -----------------------------------------------------------

@dataclass(frozen=True)
class TacticIndexing:
    rule: str
    evidence: list[str]


def tactic_indexing(core_py: str, binding_cu: str) -> TacticIndexing:
    """How autotuner tactic ints index the runner's configs, checked in the wheel's code."""
    flat = re.sub(r"\s+", " ", core_py)
    binding = re.sub(r"\s+", " ", strip_comments(binding_cu))
    evidence = []
    concatenated = ("mAllProfiles = gemm1_tactics;" in binding
                    and "mAllProfiles.insert(mAllProfiles.end(), gemm2_tactics.begin(), gemm2_tactics.end());" in binding)
    if concatenated:
        evidence.append("the CUTLASS fused-MoE binding: mAllProfiles = gemm1 tactics, then gemm2 tactics")
    if "return list(range(gemm1_count, gemm1_count + gemm2_count))" in flat:
        evidence.append(f"flashinfer/{FUSED_MOE_CORE}: MoERunner.get_valid_tactics gives gemm2 "
                        "range(gemm1_count, gemm1_count + gemm2_count)")
    if not concatenated:
        raise SourceError("the CUTLASS fused-MoE binding: cannot find how gemm1 and gemm2 tactics are combined (mAllProfiles)")
    return TacticIndexing(rule="gemm1 tactics are 0..n1-1; gemm2 tactics are n1..n1+n2-1 (one list, gemm1 first)",
                          evidence=evidence)


# --- versions ---------------------------------------------------------------------

def cutlass_version(version_h: str) -> dict[str, str]:
    parts = {k: re.search(rf"#define CUTLASS_{k}\s+(\d+)", version_h) for k in ("MAJOR", "MINOR", "PATCH")}
    if not all(parts.values()):
        raise SourceError(f"{CUTLASS_VERSION_H}: no CUTLASS_MAJOR/MINOR/PATCH")
    revision = re.search(r'#define CUTLASS_REVISION\s+"([^"]*)"', version_h)
    return {"version": ".".join(m.group(1) for m in parts.values()),  # type: ignore[union-attr]
            "revision": revision.group(1) if revision and revision.group(1) else None}


def build_meta(build_meta_py: str) -> dict[str, str | None]:
    found = {}
    for key in ("__version__", "__git_version__"):
        match = re.search(rf'^{key}\s*=\s*"([^"]*)"', build_meta_py, re.M)
        found[key] = match.group(1) if match else None
    return {"version": found["__version__"], "git_commit": found["__git_version__"]}


# --- nvcc flags and include directories, from the JIT's Python ------------------------

def _parse(package: Path, relative: str) -> ast.Module:
    try:
        return ast.parse(read(package, relative))
    except SyntaxError as exc:
        raise SourceError(f"{relative}: cannot parse it ({exc.msg} at line {exc.lineno})") from None


def _function(module: ast.Module, name: str, *older_names: str) -> ast.FunctionDef:
    """The function ``name``, or where releases before it was split out kept its code (``older_names``)."""
    for wanted in (name, *older_names):
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name == wanted:
                return node
    raise SourceError(f"no function {' or '.join(f'{n}()' for n in (name, *older_names))}")


def _module_lists(module: ast.Module) -> dict[str, list[str]]:
    """Module-level ``NAME = [str, ...]`` and ``NAME = OTHER + [...]`` lists."""
    found: dict[str, list[str]] = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _string_list(node.value, found, cuda_version=(99, 0))
            if value is not None:
                found[node.targets[0].id] = value
    return found


def _string_list(node: ast.AST, names: dict[str, list[str]], cuda_version: tuple[int, int]) -> list[str] | None:
    if isinstance(node, ast.List):
        out: list[str] = []
        for element in node.elts:
            value = _string(element, cuda_version)
            if value is None:
                return None
            if value:
                out.append(value)
        return out
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_list(node.left, names, cuda_version), _string_list(node.right, names, cuda_version)
        return None if left is None or right is None else left + right
    return None


def _string(node: ast.AST, cuda_version: tuple[int, int]) -> str | None:
    """A flag: a string constant, or ``A if is_cuda_version_at_least("x.y") else B`` decided for ``cuda_version``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (isinstance(node, ast.IfExp) and isinstance(node.test, ast.Call)
            and getattr(node.test.func, "id", None) == "is_cuda_version_at_least"
            and node.test.args and isinstance(node.test.args[0], ast.Constant)):
        wanted = tuple(int(p) for p in str(node.test.args[0].value).split(".")[:2])
        return _string(node.body if cuda_version >= wanted else node.orelse, cuda_version)
    return None


def arch_module_flags(package: Path, jit_module: str, cuda_version: tuple[int, int]) -> list[str]:
    """The nvcc flags ``jit/fused_moe.py:<jit_module>`` sets (without the gencode, which reprokit sets)."""
    module = _parse(package, JIT_FUSED_MOE)
    names = _module_lists(_parse(package, JIT_CORE))
    flags: list[str] = []
    for node in ast.walk(_function(module, jit_module)):
        target = None
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target, value, extend = node.targets[0].id, node.value, False
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            target, value, extend = node.target.id, node.value, True
        if target != "nvcc_flags":
            continue
        parsed = _string_list(value, names, cuda_version)
        if parsed is None:
            continue  # current_compilation_context.get_nvcc_flags_list(): the gencode reprokit sets itself
        flags = flags + parsed if extend else parsed
    flags = [f for f in flags if not f.startswith("-gencode")]
    if not any(f.startswith("-D") for f in flags):
        raise SourceError(f"{JIT_FUSED_MOE}: {jit_module}() sets no -D flags")
    return flags


def jit_common_flags(package: Path, cuda_version: tuple[int, int]) -> list[str]:
    """Flags every FlashInfer JIT CUDA compile gets (release build, not debug)."""
    flags: list[str] = []
    spec = _function(_parse(package, JIT_CORE), "gen_jit_spec")

    def visit(statements: list[ast.stmt]) -> None:
        nonlocal flags
        for node in statements:
            if isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if test == "debug":
                    visit(node.orelse)
                elif "os.environ" not in test:
                    visit(node.body)
                continue
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "cuda_cflags":
                assert isinstance(node.value, ast.List)
                flags = [v for v in (_string(e, cuda_version) for e in node.value.elts) if v]
            elif isinstance(node, ast.AugAssign) and ast.unparse(node.target) == "cuda_cflags":
                flags += _string_list(node.value, {}, cuda_version) or []
            elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                  and ast.unparse(node.value.func) == "cuda_cflags.insert"):
                value = _string(node.value.args[1], cuda_version)
                if value:
                    flags.insert(0, value)

    visit(spec.body)
    build = _function(_parse(package, JIT_CPP_EXT), "build_cuda_cflags", OLD_NINJA_BUILDER)
    for node in ast.walk(build):
        if isinstance(node, ast.AugAssign) and ast.unparse(node.target) == "cuda_cflags":
            constant = _string_list(node.value, {}, cuda_version)  # None when it holds a variable (-ccbin $CC)
            flags += [v for v in constant or [] if not v.startswith("$")]
    context = _parse(package, COMPILATION_CONTEXT)
    for node in ast.walk(context):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "COMMON_NVCC_FLAGS":
            flags += _string_list(node.value, {}, cuda_version) or []
    return [f for f in flags if not f.startswith("--threads")]


def include_dirs(package: Path) -> list[Path]:
    """``-I`` directories of the MoE module (fused_moe.py) then the JIT's system includes (cpp_ext.py)."""
    env = _parse(package, JIT_ENV)
    paths: dict[str, list[Path]] = {}
    for node in env.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and node.value is not None:
            value = _path_expr(node.value, paths, package)
            if value is not None:
                paths[target.id] = value
    spec_call = None
    for node in ast.walk(_function(_parse(package, JIT_FUSED_MOE), "gen_cutlass_fused_moe_module")):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "gen_jit_spec":
            spec_call = node
    if spec_call is None:
        raise SourceError(f"{JIT_FUSED_MOE}: gen_cutlass_fused_moe_module() does not call gen_jit_spec")
    dirs: list[Path] = []
    for keyword in spec_call.keywords:
        if keyword.arg == "extra_include_paths" and isinstance(keyword.value, ast.List):
            for element in keyword.value.elts:
                dirs += _path_expr(element, paths, package) or []  # output_dir: reprokit's own generated dir
    system = _function(_parse(package, JIT_CPP_EXT), "get_system_includes", OLD_NINJA_BUILDER)
    for node in ast.walk(system):
        if isinstance(node, (ast.Attribute, ast.Call)):
            for name in re.findall(r"jit_env\.(\w+)", ast.unparse(node)):
                for path in paths.get(name, []):
                    if path not in dirs:
                        dirs.append(path)
    if not dirs:
        raise SourceError(f"{JIT_FUSED_MOE}: no include directories found")
    return [d for d in dirs if d.is_dir()]


def _path_expr(node: ast.AST, names: dict[str, list[Path]], package: Path) -> list[Path] | None:
    if isinstance(node, ast.Name):
        if node.id == "_package_root":
            return [package]
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "jit_env":
        return names.get(node.attr)
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(".resolve"):
        return _path_expr(node.func.value, names, package)  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left = _path_expr(node.left, names, package)
        if left is None or len(left) != 1:
            return None
        if isinstance(node.right, ast.Constant) and isinstance(node.right.value, str):
            return [left[0] / node.right.value]
        return None
    if isinstance(node, ast.List):
        out: list[Path] = []
        for element in node.elts:
            value = _path_expr(element, names, package)
            if value is None:
                return None
            out += value
        return out
    return None


CAPACITY_HEADERS = (CUTLASS_ARCH_H, "data/cutlass/include/cutlass/gemm/collective/builders/sm90_common.inl")


def capacity_from_headers(package: Path, symbol: str) -> int:
    """The value of a CUTLASS ``smX_smem_capacity_bytes`` constant, read from the bundled headers."""
    name = symbol.rsplit("::", 1)[-1]
    for relative in CAPACITY_HEADERS:
        match = re.search(rf"constexpr\s+int\s+{name}\s*=\s*(\d+)\s*;", strip_comments(read(package, relative)))
        if match:
            return int(match.group(1))
    raise SourceError(f"no 'constexpr int {name} = ...' in {', '.join(CAPACITY_HEADERS)}")
