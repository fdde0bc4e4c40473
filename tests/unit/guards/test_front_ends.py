"""Only the front ends talk to the person at the terminal: no module below ``reprokit/commands/`` prints, writes to
stdout or stderr, opens a console on the terminal, ends the process or decides an exit code (AST, not habit).

The modules below return data or raise a typed ``ReprokitError``; a front end (what an Invoke task calls) prints it
and turns it into the exit code. A function may draw onto a console it is given (``report/smem_table.py``); it may
not open one onto the terminal. The workloads are host programs with their own documented exit codes and are left
out, as are the wiring modules that adapt Invoke.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
REPROKIT = REPO / "reprokit"
FRONT_ENDS = REPROKIT / "commands"
NOT_BELOW = {
    REPROKIT / "workloads",  # host programs: result.json and their own exit codes (facts/exits.py)
    REPROKIT / "cli" / "tasks.py",  # the root namespace
    REPROKIT / "cli" / "program.py",  # the programs `invoke` and `reprokit` (task help, --list, --version, completion)
    REPROKIT / "cli" / "task_parser.py",  # Invoke's parser, extended: its usage errors are Invoke's ParseError
    REPROKIT / "output" / "verbosity.py",  # what --quiet/--verbose mean, the --verbose debug handler on stderr
}
# What a module below the front ends may still do, and why; the list can only shrink.
ALLOWED = {
    ("reprokit/errors.py", "ExitCode"): "the one table of exit codes; a ReprokitError carries its code",
    ("reprokit/hosts/hostside.py", "sys.stdout"): "runs on the GPU host (python3 - ...): stdout is the listing's protocol",
    ("reprokit/hosts/hostside.py", "sys.stderr"): "its one-line refusal and the sha256 line, read by the pull-back",
    ("reprokit/hosts/hostside.py", "sys.exit"): "EXIT_REFUSED: a file changed since the listing",
}
ENDS = {"exit", "quit"}  # the builtins that end the process


def _below_front_ends() -> list[Path]:
    def outside(path: Path) -> bool:
        return not path.is_relative_to(FRONT_ENDS) and not any(
            path == other or path.is_relative_to(other) for other in NOT_BELOW)
    return [path for path in sorted(REPROKIT.rglob("*.py")) if outside(path)]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _talks(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each way the module would talk to the terminal or end the process."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "print" or name in ENDS:
                found.append((node.lineno, name))
            elif name in ("sys.exit", "os._exit"):
                found.append((node.lineno, name))
            elif name.split(".")[-1] == "Console" and not any(k.arg == "file" for k in node.keywords):
                found.append((node.lineno, "Console"))  # a rich console onto the terminal
        elif isinstance(node, ast.Attribute) and _dotted(node) in ("sys.stdout", "sys.stderr", "sys.__stdout__",
                                                                    "sys.__stderr__"):
            found.append((node.lineno, _dotted(node)))
        elif isinstance(node, ast.Name) and node.id in ("ExitCode", "SystemExit"):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Name) and node.id == "print" and not any(
                isinstance(call, ast.Call) and call.func is node for call in ast.walk(tree)):
            found.append((node.lineno, "print"))  # handed on as a default `say`: the module would print itself
        elif isinstance(node, ast.alias) and node.name in ("ExitCode", "SystemExit"):
            found.append((getattr(node, "lineno", 0), node.name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "invoke" \
                and any(a.name == "Exit" for a in node.names):
            found.append((node.lineno, "invoke.Exit"))  # the wiring's (Fabric's CommandTimedOut is a host's answer)
        elif isinstance(node, ast.Attribute) and node.attr == "Exit" and _dotted(node).startswith("invoke."):
            found.append((node.lineno, "invoke.Exit"))
    return found


def _offences() -> dict[tuple[str, str], list[int]]:
    offences: dict[tuple[str, str], list[int]] = {}
    for path in _below_front_ends():
        rel = str(path.relative_to(REPO))
        for line, what in _talks(ast.parse(path.read_text(encoding="utf-8"), rel)):
            offences.setdefault((rel, what), []).append(line)
    return offences


def test_no_module_below_the_front_ends_prints_or_decides_an_exit_code() -> None:
    found = _offences()
    assert [f"{rel}:{lines[0]}: {what}" for (rel, what), lines in sorted(found.items())
            if (rel, what) not in ALLOWED] == []


def test_every_allowed_exception_is_still_needed() -> None:
    assert sorted(set(ALLOWED) - set(_offences())) == []


def test_the_check_sees_each_way_of_talking() -> None:
    """The guard fails where it should: each form it refuses, in a module of its own."""
    source = (
        "import sys\nimport invoke\nfrom invoke import Exit\nfrom invoke.exceptions import CommandTimedOut\n"
        "from rich.console import Console\nfrom reprokit.errors import ExitCode\n"
        "print('x')\nsys.exit(1)\nsys.stderr.write('x')\nConsole().print('x')\nraise SystemExit(2)\nexit(3)\n"
        "raise invoke.Exit('x', code=2)\nConsole(file=buffer).print('fine')\ndef run(say=print): ...\n"
    )
    found = _talks(ast.parse(source))
    assert sorted({what for _, what in found}) == [
        "Console", "ExitCode", "SystemExit", "exit", "invoke.Exit", "print", "sys.exit", "sys.stderr"]
    assert sorted(line for line, what in found if what == "invoke.Exit") == [3, 13]
    assert sorted(line for line, what in found if what == "print") == [7, 15]


def test_the_front_ends_are_the_commands_package() -> None:
    """Every module of reprokit/commands/ is a group of tasks or what they share; the task modules hold an ``ns``."""
    groups = {path.stem for path in FRONT_ENDS.glob("*.py")
              if "\nns = tasking.group(" in path.read_text(encoding="utf-8")}
    assert groups == {"run", "operate", "kits", "info", "records", "smem", "fix", "setup", "ci"}
    shared = {path.stem for path in FRONT_ENDS.glob("*.py")} - groups
    assert shared == {"__init__", "console", "exit_codes", "flags", "fit_table", "tasking"}
