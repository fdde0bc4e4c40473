"""The command-line options an upstream release really accepts, read from its own wheel.

A flag a kit passes to sglang (``--moe-runner-backend``) or to its benchmark
client (``--dataset-name``) is right when the pinned release's own argparse
code declares it: ``sglang/srt/server_args.py`` and ``sglang/bench_serving.py``
of the sglang wheel. The wheel comes from the cache (``<cache>/wheels``, shared
with the static analysis) or from the package index, once. The option strings
and literal ``choices`` are read from the source with ``ast``, never by
importing it (importing sglang needs torch and a GPU stack).

Checking follows argparse: an exact option string, or an unambiguous prefix of
one (``allow_abbrev``, on in both parsers), ``--flag=value`` or ``--flag value``,
and a value outside literal ``choices`` is refused as argparse refuses it.

Newer sglang releases (0.5.23 is one) moved most server options out of ``server_args.py`` into
``sglang/srt/arg_groups/fields/*.py``: ``name: A[type, "help"] = default`` or ``A[type, Arg(...)]``, turned into
argparse options by ``arg_groups/arg_utils.py:add_cli_args_from_dataclass`` (``--`` + the name with dashes, or
``Arg(cli_name=...)``, plus ``aliases``; ``bool`` is ``store_true``; ``Literal[...]`` gives the choices).
``server_options`` reads those fields too, so a flag is checked against everything that release's parser accepts.
"""

from __future__ import annotations

import ast
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.config.kit import Kit
from reprokit.errors import HostError
from reprokit.workloads import serve
from reprokit.workloads.contract import WorkloadError
from reprokit.workloads.static_smem.wheel import default_cache_dir, download, wheel_file_name

SGLANG = "sglang"
SERVER_ARGS = "sglang/srt/server_args.py"  # ServerArgs.add_cli_args: `python -m sglang.launch_server`
BENCH_SERVING = "sglang/bench_serving.py"  # `python -m sglang.bench_serving`
# argparse actions that take no value on the command line
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version", "append_const"}


@dataclass(frozen=True)
class Option:
    strings: tuple[str, ...]  # every spelling, e.g. ("--tp-size", "--tp")
    takes_value: bool
    value_optional: bool  # nargs "?" or "*"
    nargs: str | int | None  # argparse's nargs, as the source gives it
    choices: tuple[str, ...] | None  # literal choices, when the source gives them as strings
    line: int  # where the source declares it


@dataclass(frozen=True)
class OptionTable:
    """The options one upstream file declares, and where they came from."""

    origin: str  # e.g. "sglang 0.5.9 sglang/srt/server_args.py"
    options: dict[str, Option]  # by option string

    def resolve(self, flag: str) -> tuple[Option | None, str | None]:
        """The option ``flag`` names (argparse's prefix rule), or why none does."""
        if flag in self.options:
            return self.options[flag], None
        matches = sorted({o.strings[0]: o for s, o in self.options.items() if s.startswith(flag)}.items())
        if len(matches) == 1:
            return matches[0][1], None
        if matches:
            return None, f"{flag} is ambiguous in {self.origin} (could be {', '.join(m[0] for m in matches)})"
        return None, f"{flag} is not an option of {self.origin}"

    def problems(self, argv: list[str]) -> list[str]:
        """What argparse of that release would refuse in ``argv`` (options only; positionals are not checked)."""
        found = []
        index = 0
        while index < len(argv):
            token = argv[index]
            index += 1
            if not token.startswith("-") or token == "-":
                continue
            flag, has_inline, inline = token.partition("=")
            option, problem = self.resolve(flag)
            if option is None:
                found.append(problem)
                continue
            if not option.takes_value:
                if has_inline:
                    found.append(f"{flag} of {self.origin} takes no value (got {token!r})")
                continue
            if has_inline:
                value = inline
            elif index < len(argv) and not argv[index].startswith("--"):
                value = argv[index]
                index += 1
            else:
                if not option.value_optional:
                    found.append(f"{flag} of {self.origin} needs a value")
                continue
            if option.choices is not None and value not in option.choices:
                found.append(f"{flag} {value!r} is not one of {self.origin}'s choices: {', '.join(option.choices)}")
        return found

    def to_json(self) -> dict:
        """The table as data (JSON): each option's strings, whether it takes a value, its nargs and choices, in
        the source's order; what a program that cannot read the wheel needs to parse the same command lines."""
        return {"origin": self.origin, "options": [
            {"strings": list(o.strings), "takes_value": o.takes_value, "value_optional": o.value_optional,
             "nargs": o.nargs, "choices": list(o.choices) if o.choices is not None else None}
            for o in sorted({o.strings: o for o in self.options.values()}.values(), key=lambda o: o.line)]}


def wheel_path(package: str, version: str, cache_dir: Path | None = None) -> Path:
    """The pinned wheel in the cache, downloaded once (``pip download --no-deps``) when it is not there."""
    wheels_dir = (cache_dir or default_cache_dir()) / "wheels"
    cached = wheels_dir / wheel_file_name(version, package)
    if cached.is_file():
        return cached
    try:
        return download(package, version, wheels_dir)
    except WorkloadError as exc:
        raise HostError(f"cannot read {package} {version}'s own options: {exc}; put {cached.name} in {wheels_dir}") from None


def read_wheel_member(wheel: Path, member: str) -> str:
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(member).decode("utf-8")
    except KeyError:
        raise HostError(f"{wheel}: has no {member}; this release keeps its options elsewhere") from None
    except zipfile.BadZipFile as exc:
        raise HostError(f"{wheel}: not a valid wheel ({exc}); delete it and run again") from None


def parse_options(source: str, origin: str) -> OptionTable:
    """Every ``*.add_argument("--x", ...)`` call of a Python source, with literal choices resolved.

    ``choices=NAME`` is resolved when NAME is a module-level list or tuple of string literals
    (sglang's ``QUANTIZATION_CHOICES``); anything computed is left unchecked (``choices`` None).
    """
    tree = ast.parse(source)
    constants: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            strings = _string_list(node.value)
            if strings is not None:
                constants[node.targets[0].id] = strings
    valueless_actions = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and _nargs_default(node) == 0}
    options: dict[str, Option] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        strings = tuple(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
        if not strings or not strings[0].startswith("-"):
            continue  # a positional argument
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        action = keywords.get("action")
        action_name = action.value if isinstance(action, ast.Constant) else None
        nargs = keywords.get("nargs")
        nargs_value = nargs.value if isinstance(nargs, ast.Constant) else None
        if isinstance(action, ast.Name) and action.id in valueless_actions:
            nargs_value = 0  # e.g. sglang's DeprecatedAction (nargs=0)
        takes_value = action_name not in NO_VALUE_ACTIONS and nargs_value != 0
        choices_node = keywords.get("choices")
        choices = None
        if isinstance(choices_node, ast.Name):
            choices = constants.get(choices_node.id)
        elif choices_node is not None:
            choices = _string_list(choices_node)
        option = Option(strings=strings, takes_value=takes_value, value_optional=nargs_value in ("?", "*"),
                        nargs=nargs_value if isinstance(nargs_value, (str, int)) else None, choices=choices,
                        line=node.lineno)
        for string in strings:
            options[string] = option
    return OptionTable(origin=origin, options=options)


def _nargs_default(cls: ast.ClassDef) -> object:
    """The default of ``nargs`` in a custom argparse Action's ``__init__`` (None when it has none)."""
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            args = item.args.args[-len(item.args.defaults):] if item.args.defaults else []
            for arg, default in zip(args, item.args.defaults):
                if arg.arg == "nargs" and isinstance(default, ast.Constant):
                    return default.value
    return None


def _string_list(node: ast.AST) -> tuple[str, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


def upstream_options(package: str, version: str, member: str, cache_dir: Path | None = None) -> OptionTable:
    """The options ``member`` of ``package``'s ``version`` wheel declares."""
    wheel = wheel_path(package, version, cache_dir)
    source = read_wheel_member(wheel, member)
    table = parse_options(source, f"{package} {version} {member}")
    moved_to = _star_reexport(source, package)
    if not table.options and moved_to:  # a deprecated path (sglang 0.5.23's bench_serving.py) re-exports the module
        table = parse_options(read_wheel_member(wheel, moved_to), f"{package} {version} {member} -> {moved_to}")
    if not table.options:
        raise HostError(f"{wheel}: {member} declares no options; this release parses its flags some other way")
    return table


def _star_reexport(source: str, package: str) -> str | None:
    """The wheel member a module re-exports with ``from <package>.x import *``, if it does."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package + ".")
                and any(alias.name == "*" for alias in node.names)):
            return node.module.replace(".", "/") + ".py"
    return None


FIELDS_DIR = "sglang/srt/arg_groups/fields/"  # newer releases (0.5.23): options as dataclass fields


def _literal_strings(node: ast.AST | None) -> tuple[str, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                       for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[union-attr]
    return None


def _field_option(name: str, annotation: ast.Subscript, line: int) -> Option | None:
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if len(elements) < 2:
        return None
    type_text = ast.unparse(elements[0])
    meta = elements[1]
    keywords: dict[str, ast.AST] = {}
    if isinstance(meta, ast.Call) and ast.unparse(meta.func) == "Arg":
        keywords = {k.arg: k.value for k in meta.keywords if k.arg}
    elif not (isinstance(meta, ast.Constant) and isinstance(meta.value, str)):
        return None  # no Arg and no help string: not a command-line option (arg_utils skips it)
    no_cli = keywords.get("no_cli")
    if isinstance(no_cli, ast.Constant) and no_cli.value is True:
        return None
    cli_name = keywords.get("cli_name")
    strings = [cli_name.value if isinstance(cli_name, ast.Constant) else "--" + name.replace("_", "-")]
    strings += list(_literal_strings(keywords.get("aliases")) or ())
    action = keywords.get("action")
    action_name = action.value if isinstance(action, ast.Constant) else None
    is_bool = type_text in ("bool", "Optional[bool]", "bool | None")
    nargs = keywords.get("nargs")
    nargs_value = nargs.value if isinstance(nargs, ast.Constant) else None
    choices = _literal_strings(keywords.get("choices"))
    if choices is None and type_text.startswith(("Literal[", "Optional[Literal[")):
        literal = elements[0] if type_text.startswith("Literal[") else elements[0].slice  # type: ignore[attr-defined]
        values = literal.slice.elts if isinstance(literal.slice, ast.Tuple) else [literal.slice]  # type: ignore[attr-defined]
        if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            choices = tuple(v.value for v in values)  # type: ignore[union-attr]
    takes_value = not (is_bool and action is None) and action_name not in NO_VALUE_ACTIONS
    if nargs_value is None and re.match(r"(Optional\[)?(List|list)\[", type_text):
        nargs_value = "+"  # arg_utils: List[X] fields take nargs "+" unless Arg says otherwise
    return Option(strings=tuple(strings), takes_value=takes_value, value_optional=nargs_value in ("?", "*"),
                  nargs=nargs_value, choices=choices, line=line)


def field_options(source: str) -> dict[str, Option]:
    """The options of every ``A[...]`` field of the classes in one ``arg_groups/fields`` module."""
    found: dict[str, Option] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                    and isinstance(item.annotation, ast.Subscript)
                    and ast.unparse(item.annotation.value) in ("A", "Annotated")):
                option = _field_option(item.target.id, item.annotation, item.lineno)
                if option is not None:
                    for string in option.strings:
                        found[string] = option
    return found


def server_options(version: str, cache_dir: Path | None = None) -> OptionTable:
    """Every option ``python -m sglang.launch_server`` of ``version`` accepts: server_args.py and its field modules."""
    table = upstream_options("sglang", version, SERVER_ARGS, cache_dir)
    wheel = wheel_path("sglang", version, cache_dir)
    with zipfile.ZipFile(wheel) as zf:
        members = sorted(m for m in zf.namelist() if m.startswith(FIELDS_DIR) and m.endswith(".py"))
        merged = dict(table.options)
        for member in members:
            merged.update(field_options(zf.read(member).decode("utf-8")))
    origin = f"sglang {version} {SERVER_ARGS}" + (f" + {FIELDS_DIR}*.py" if members else "")
    return OptionTable(origin=origin, options=merged)


def kit_flag_problems(kit: Kit, cache_dir: Path | None = None) -> tuple[list[str], list[str]]:
    """Every sglang server and bench_serving flag a kit's serve steps pass, checked against its pinned sglang
    (a serve-vllm step's flags and variables are ``reprokit.upstream.vllm_args``'s; ``kit_check.flag_problems`` asks both).

    Returns (problems, what was checked). The command lines are the serve workload's own
    (``server_command``, ``bench_command``), so what is checked is what would run.
    """
    steps = [s for s in kit.steps if s.uses == "serve"]
    version = kit.pins.get(SGLANG)
    if not steps or not version:
        return [], []
    server = server_options(version, cache_dir)
    bench = upstream_options(SGLANG, version, BENCH_SERVING, cache_dir)
    problems, checked = [], []
    for step in steps:
        merged = {**serve.DEFAULTS, **step.with_, "bench": {**serve.DEFAULTS["bench"], **(step.with_.get("bench") or {})}}
        server_argv = serve.server_command(merged, "python3")[3:]  # after `python3 -m sglang.launch_server`
        problems += [f"step '{step.name}': sglang.launch_server {p}" for p in server.problems(server_argv)]
        bench_flags = 0
        for concurrency in merged["bench"]["concurrencies"]:
            bench_argv = serve.bench_command("python3", int(merged["port"]), merged["bench"], concurrency, Path("b.jsonl"))[3:]
            bench_flags = sum(a.startswith("--") for a in bench_argv)
            problems += [f"step '{step.name}': sglang.bench_serving {p}" for p in bench.problems(bench_argv)]
        checked.append(f"step '{step.name}': {sum(a.startswith('--') for a in server_argv)} server flags against"
                       f" {server.origin}, {bench_flags} benchmark flags against {bench.origin}")
    return sorted(set(problems), key=problems.index), checked

