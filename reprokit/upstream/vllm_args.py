"""The ``vllm serve`` and ``vllm bench serve`` options and the environment variables a vLLM release accepts, read
from its own wheel (the counterpart of ``upstream_args`` for sglang; nothing is imported, nothing installed).

vLLM builds most server options from dataclass fields: ``vllm/engine/arg_utils.py`` writes each option string
literally (``parallel_group.add_argument("--tensor-parallel-size", "-tp", **parallel_kwargs[...])``) and
``get_kwargs`` derives the rest from the field's type, which ``EngineArgs`` restates: ``bool`` is argparse's
``BooleanOptionalAction`` (``--x`` and ``--no-x``, no value), a ``Literal`` (or a ``Name = Literal[...]`` of
``vllm/config/*.py``) gives the choices. The frontend's options (``--host``, ``--port``) are the fields of the
``*FrontendArgs`` classes of ``vllm/entrypoints/openai/cli_args.py``, ``--`` + the name with dashes. The benchmark's
are literal ``add_argument`` calls of ``vllm/benchmarks/serve.py`` and ``vllm/benchmarks/datasets/``.

``vllm/envs.py`` lists every variable vLLM knows as the keys of ``environment_variables``; vLLM warns about any
other ``VLLM_*`` variable it finds set (``validate_environ``) and never reads it, so a kit that sets one is
setting nothing, and ``invoke kits --check`` says so.
"""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

from reprokit.errors import HostError
from reprokit.upstream.args import Option, OptionTable, parse_options
from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem.wheel import default_cache_dir, download

VLLM = "vllm"
ARG_UTILS = "vllm/engine/arg_utils.py"
CLI_ARGS = "vllm/entrypoints/openai/cli_args.py"
CONFIG_DIR = "vllm/config/"
BENCH_FILES = ("vllm/benchmarks/serve.py", "vllm/benchmarks/datasets/datasets.py", "vllm/benchmarks/datasets.py")
ENVS = "vllm/envs.py"


def vllm_wheel(version: str, cache_dir: Path | None = None) -> Path:
    """The vLLM wheel of ``version`` in the cache (a platform wheel: any ``vllm-<version>-*.whl``), else downloaded."""
    wheels_dir = (cache_dir or default_cache_dir()) / "wheels"
    found = sorted(wheels_dir.glob(f"vllm-{version}-*.whl"))
    if found:
        return found[0]
    try:
        return download(VLLM, version, wheels_dir)
    except WorkloadError as exc:
        raise HostError(f"cannot read vllm {version}'s own options: {exc}; put vllm-{version}-*.whl in {wheels_dir}") from None


def _members(wheel: Path) -> dict[str, str]:
    wanted = (ARG_UTILS, CLI_ARGS, ENVS, *BENCH_FILES)
    try:
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            return {m: zf.read(m).decode("utf-8") for m in names
                    if m in wanted or (m.startswith(CONFIG_DIR) and m.endswith(".py"))}
    except zipfile.BadZipFile as exc:
        raise HostError(f"{wheel}: not a valid wheel ({exc}); delete it and run again") from None


def _literal_aliases(sources: list[str]) -> dict[str, tuple[str, ...]]:
    """``MoEBackend = Literal["auto", ...]`` at module level, across the config modules."""
    aliases = {}
    for source in sources:
        for node in ast.parse(source).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Subscript) and ast.unparse(node.value.value) == "Literal"):
                values = _literal_values(node.value)
                if values is not None:
                    aliases[node.targets[0].id] = values
    return aliases


def _literal_values(node: ast.Subscript) -> tuple[str, ...] | None:
    elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements):
        return tuple(e.value for e in elements)  # type: ignore[union-attr]
    return None


def _union(annotation: ast.AST) -> list[ast.AST]:
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _union(annotation.left) + _union(annotation.right)
    return [annotation]


def field_kinds(source: str, classes: tuple[str, ...] | None, aliases: dict[str, tuple[str, ...]]) -> dict[str, tuple]:
    """``{field: ("bool" | "value", choices)}`` of the dataclass fields of ``classes`` (all classes when None)."""
    kinds: dict[str, tuple] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef) or (classes is not None and node.name not in classes):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            parts = [p for p in _union(item.annotation) if ast.unparse(p) != "None"]
            names = [ast.unparse(p) for p in parts]
            if "bool" in names and "str" not in names:
                kinds[item.target.id] = ("bool", None)
                continue
            choices = None
            if len(parts) == 1:
                part = parts[0]
                if isinstance(part, ast.Subscript) and ast.unparse(part.value) == "Literal":
                    choices = _literal_values(part)
                elif isinstance(part, ast.Name):
                    choices = aliases.get(part.id)
            kinds[item.target.id] = ("value", choices)
    return kinds


def _with_kinds(table: OptionTable, source: str, kinds: dict[str, tuple]) -> dict[str, Option]:
    """The literal options of ``arg_utils.py`` with the value, choices and ``--no-`` spelling of their field."""
    def subscript_key(node: ast.AST) -> str | None:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return node.slice.value
        return None

    tree = ast.parse(source)
    named = {n.targets[0].id: subscript_key(n.value) for n in ast.walk(tree)  # moe_backend_kwargs = kernel_kwargs["moe_backend"]
             if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
             and subscript_key(n.value)}
    field_of: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            for keyword in node.keywords:
                if keyword.arg is None:
                    key = subscript_key(keyword.value) or (named.get(keyword.value.id)
                                                           if isinstance(keyword.value, ast.Name) else None)
                    if key:
                        field_of[node.lineno] = key
    options = dict(table.options)
    for option in {id(o): o for o in table.options.values()}.values():
        field = field_of.get(option.line)
        if field not in kinds:
            continue
        kind, choices = kinds[field]
        changed = Option(strings=option.strings, takes_value=kind != "bool", value_optional=False, nargs=option.nargs,
                         choices=choices if kind != "bool" else None, line=option.line)
        for string in option.strings:
            options[string] = changed
        if kind == "bool":  # BooleanOptionalAction: --no-<name> too, an option of its own
            negated = tuple("--no-" + s[2:] for s in option.strings if s.startswith("--"))
            for string in negated:
                options[string] = Option(strings=negated, takes_value=False, value_optional=False, nargs=None,
                                         choices=None, line=option.line)
    return options


def serve_options(version: str, cache_dir: Path | None = None) -> OptionTable:
    """Every option ``vllm serve`` of ``version`` accepts (engine and frontend)."""
    wheel = vllm_wheel(version, cache_dir)
    members = _members(wheel)
    if ARG_UTILS not in members or CLI_ARGS not in members:
        raise HostError(f"{wheel}: has no {ARG_UTILS} or {CLI_ARGS}; this release parses its flags some other way")
    aliases = _literal_aliases([text for name, text in members.items() if name.startswith(CONFIG_DIR)])
    engine = parse_options(members[ARG_UTILS], "")
    options = _with_kinds(engine, members[ARG_UTILS], field_kinds(members[ARG_UTILS], ("EngineArgs",), aliases))
    frontend_classes = tuple(n.name for n in ast.walk(ast.parse(members[CLI_ARGS]))
                             if isinstance(n, ast.ClassDef) and n.name.endswith("FrontendArgs"))
    for field, (kind, choices) in field_kinds(members[CLI_ARGS], frontend_classes, aliases).items():
        flag = "--" + field.replace("_", "-")
        option = Option(strings=(flag,), takes_value=kind != "bool", value_optional=False, nargs=None,
                        choices=choices, line=0)
        options[flag] = option
        if kind == "bool":
            options["--no-" + flag[2:]] = Option(strings=("--no-" + flag[2:],), takes_value=False,
                                                 value_optional=False, nargs=None, choices=None, line=0)
    if not options:
        raise HostError(f"{wheel}: {ARG_UTILS} declares no options")
    return OptionTable(origin=f"vllm {version} {ARG_UTILS} + {CLI_ARGS}", options=options)


def bench_options(version: str, cache_dir: Path | None = None) -> OptionTable:
    """Every option ``vllm bench serve`` of ``version`` accepts (its own and the datasets')."""
    wheel = vllm_wheel(version, cache_dir)
    members = _members(wheel)
    files = [name for name in BENCH_FILES if name in members]
    options: dict[str, Option] = {}
    for name in files:
        options.update(parse_options(members[name], "").options)
    if not options:
        raise HostError(f"{wheel}: none of {', '.join(BENCH_FILES)} declares options")
    return OptionTable(origin=f"vllm {version} {' + '.join(files)}", options=options)


def environment_variables(version: str, cache_dir: Path | None = None) -> tuple[str, set[str]]:
    """The origin and the names of ``vllm/envs.py``'s ``environment_variables`` (the variables vLLM reads)."""
    wheel = vllm_wheel(version, cache_dir)
    source = _members(wheel).get(ENVS)
    if source is None:
        raise HostError(f"{wheel}: has no {ENVS}")
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(node.value, ast.Dict):
            return f"vllm {version} {ENVS}", {k.value for k in node.value.keys
                                              if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    raise HostError(f"{wheel}: {ENVS} has no environment_variables dictionary")


def env_problems(env: dict, known: set[str], origin: str) -> list[str]:
    """Each ``VLLM_*`` variable of ``env`` that release does not read (it warns 'Unknown vLLM environment variable')."""
    return [f"{name} is not an environment variable of {origin}: vLLM warns 'Unknown vLLM environment variable"
            f" detected' and never reads it" for name in env if name.startswith("VLLM_") and name not in known]


def kit_problems(kit, cache_dir: Path | None = None) -> tuple[list[str], list[str]]:  # noqa: ANN001 - a Kit
    """Every ``vllm serve`` flag, ``vllm bench serve`` flag and ``VLLM_*`` variable of a kit's serve-vllm steps,
    against its pinned vLLM. The command lines are the workload's own, so what is checked is what would run."""
    from reprokit.workloads import serve_vllm  # noqa: PLC0415 - only kits with a serve-vllm step need it

    steps = [s for s in kit.steps if s.uses == "serve-vllm"]
    version = kit.pins.get(VLLM)
    if not steps or not version:
        return [], []
    server, bench = serve_options(version, cache_dir), bench_options(version, cache_dir)
    env_origin, known = environment_variables(version, cache_dir)
    problems, checked = [], []
    for step in steps:
        merged = serve_vllm.merged_params(dict(step.with_))
        server_argv = serve_vllm.server_command(merged, "vllm")[3:]  # after `vllm serve MODEL`
        problems += [f"step '{step.name}': vllm serve {p}" for p in server.problems(server_argv)]
        problems += [f"step '{step.name}': env {p}" for p in env_problems(merged.get("env") or {}, known, env_origin)]
        bench_argv = serve_vllm.bench_command("vllm", 8000, "m", merged["bench"], 1, Path("."))[3:]
        problems += [f"step '{step.name}': vllm bench serve {p}" for p in bench.problems(bench_argv)]
        vllm_env = [k for k in (merged.get("env") or {}) if k.startswith("VLLM_")]
        checked.append(f"step '{step.name}': {sum(a.startswith('-') for a in server_argv)} server flags against"
                       f" {server.origin}, {sum(a.startswith('--') for a in bench_argv)} benchmark flags against"
                       f" {bench.origin}, {len(vllm_env)} VLLM_* variables against {env_origin}")
    return sorted(set(problems), key=problems.index), checked
