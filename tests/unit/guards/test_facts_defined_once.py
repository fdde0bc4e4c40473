"""Each shared fact is defined once, in reprokit/workloads/facts, and imported everywhere else.

Kits, docs, example lines and comments restate numbers and messages on purpose; what this test refuses is a
second definition in code: a name that the facts module defines, a capacity or the tile-enum arithmetic as a
number, or a regex of a message that facts.errors owns.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reprokit.workloads.facts import arch, exits, tiles, upstream_errors

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
FACTS = REPROKIT / "workloads" / "facts"
FACT_NAMES = {name for module in (arch, exits, tiles, upstream_errors) for name, value in vars(module).items()
              if name.isupper() or (isinstance(value, type) and value.__module__ == module.__name__)}
NUMBERS = {*arch.SMEM_OPTIN_BYTES_BY_ARCH.values(), arch.DEFAULT_SMEM_PER_BLOCK_BYTES, 1_000_000}
MESSAGES = [value for value in vars(upstream_errors).values() if isinstance(value, upstream_errors.ErrorMessage)]
# the literal start of each shared message's regex, and what marks a string constant as a regex of it
MESSAGE_STARTS = [re.split(r"\\|\(|\[", message.regex)[0] for message in MESSAGES]
REGEX_MARKS = ("\\.", "\\(", "([0-9]+)", "(?P<", "[0-9]")


def _control_plane_and_workload_files() -> list[Path]:
    return [p for p in sorted(REPROKIT.rglob("*.py")) if FACTS not in p.parents]


def _definitions(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            found.append((node.lineno, node.name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, t.id) for t in targets if isinstance(t, ast.Name)]
    return found


def test_no_name_of_the_facts_module_is_defined_again() -> None:
    again = [f"{path.relative_to(REPROKIT.parent)}:{line}: {name}"
             for path in _control_plane_and_workload_files()
             for line, name in _definitions(ast.parse(path.read_text(encoding="utf-8")))
             if name in FACT_NAMES]
    assert again == []


def test_capacities_and_the_tile_enum_arithmetic_are_not_retyped() -> None:
    numbers = [f"{path.relative_to(REPROKIT.parent)}:{node.lineno}: {node.value}"
               for path in _control_plane_and_workload_files()
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and type(node.value) is int and node.value in NUMBERS]
    assert numbers == []


def test_no_second_regex_of_a_shared_message() -> None:
    assert all(len(start) >= 12 for start in MESSAGE_STARTS), MESSAGE_STARTS
    regexes = [f"{path.relative_to(REPROKIT.parent)}:{node.lineno}: {node.value[:60]!r}"
               for path in _control_plane_and_workload_files()
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)
               and any(start in node.value for start in MESSAGE_STARTS)
               and any(mark in node.value for mark in REGEX_MARKS)]
    assert regexes == []


def test_the_guard_finds_a_retyped_fact() -> None:
    tree = ast.parse("SMEM_OPTIN_BYTES_BY_ARCH = {'sm120': 101376}\nclass TileEnum: ...\n")
    assert _definitions(tree) == [(1, "SMEM_OPTIN_BYTES_BY_ARCH"), (2, "TileEnum")]
    assert {"SMEM_OPTIN_BYTES_BY_ARCH", "TileEnum", "Exit", "STICKY_CUDA_ERRORS", "GPU_ARCHES"} <= FACT_NAMES
    assert 101376 in NUMBERS
