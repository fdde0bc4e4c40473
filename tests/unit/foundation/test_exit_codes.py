"""One table of exit codes: docs/exit-codes.md is the code's enums, rendered, and nothing else names a number."""

from __future__ import annotations

import ast

from reprokit.commands.exit_codes import BEGIN, END, exit_code_tables, page_block
from reprokit.errors import ExitCode
from tests.conftest import REPO

PAGE = REPO / "docs" / "exit-codes.md"


def test_the_page_is_the_enums_rendered():
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == text.count(END) == 1
    assert page_block() in text, "docs/exit-codes.md is stale: paste `python -m reprokit.commands.exit_codes` between its markers"


def test_every_command_code_has_its_meaning_and_row():
    rows = [line for line in exit_code_tables().splitlines() if line.startswith("| ") and "`" in line]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows[:len(ExitCode)]] == [str(c.value) for c in ExitCode]
    assert [c.value for c in ExitCode] == [0, 1, 2, 3, 4, 5, 130, 141]
    assert all(code.meaning for code in ExitCode)


def test_no_front_end_spells_an_exit_code_as_a_number():
    """`exit(141)`, `Exit(code=2)`, `{2: ...}` maps of codes: each is an enum member, named where the table is."""
    found = []
    for path in sorted((REPO / "reprokit").rglob("*.py")):
        if "workloads" in path.parts or path.name in ("errors.py", "hostside.py"):
            continue  # the table itself; the host programs have their own (facts/exits.py, hostside's EXIT_REFUSED)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                    "exit", "Exit", "SystemExit", "_exit"):
                literal = [a for a in [*node.args, *(k.value for k in node.keywords)]
                           if isinstance(a, ast.Constant) and isinstance(a.value, int)]
                if literal:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []
