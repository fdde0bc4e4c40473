"""sglang's server options, including those newer releases declare as dataclass fields instead of ``add_argument``.

Later sglang releases (0.5.23 is one) moved most server options out of ``server_args.py`` into
``sglang/srt/arg_groups/fields/*.py``: ``name: A[type, "help"] = default`` or ``A[type, Arg(...)]``, turned into
argparse options by ``arg_groups/arg_utils.py:add_cli_args_from_dataclass`` (``--`` + the name with dashes, or
``Arg(cli_name=...)``, plus ``aliases``; ``bool`` is ``store_true``; ``Literal[...]`` gives the choices). This
reads those fields with ``ast`` and merges them with what ``reprokit.upstream_args`` reads from ``server_args.py``,
so a flag is checked against everything that release's parser accepts.
"""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path

from reprokit.upstream_args import SERVER_ARGS, Option, OptionTable, upstream_options, wheel_path

FIELDS_DIR = "sglang/srt/arg_groups/fields/"
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count"}


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
