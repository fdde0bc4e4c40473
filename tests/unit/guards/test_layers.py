"""The layers' import rules that the renovation settled, checked on the code (AST), not remembered."""

from __future__ import annotations

import ast
from pathlib import Path

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"

# (package, package it must not import): the kit schema reads the step kinds from reprokit/step_kinds/, not
# from the planner; hosts run commands, images build through them.
NEVER = [("config", "plan"), ("hosts", "images"), ("report", "workloads")]
# today's exceptions, so the list can only shrink (the serve kind, reprokit/step_kinds/serve.py, now recomputes old
# records' serve figures; tests/unit/guards/test_step_kinds.py lists what a kind module may import)
ALLOWED: dict[tuple[str, str], set[str]] = {}
FACTS = "reprokit.workloads.facts"  # the shared facts are for every layer


def _imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    return modules


def test_no_layer_imports_what_it_must_not() -> None:
    broken = []
    for package, forbidden in NEVER:
        target = f"reprokit.{forbidden}"
        for path in sorted((REPROKIT / package).rglob("*.py")):
            for module in sorted(_imports(path)):
                if (module == target or module.startswith(target + ".")) and not module.startswith(FACTS) \
                        and module not in ALLOWED.get((package, forbidden), set()):
                    broken.append(f"{path.relative_to(REPROKIT.parent)}: {module}")
    assert broken == []


def test_every_allowed_exception_is_still_needed() -> None:
    used = {module for (package, _), modules in ALLOWED.items()
            for path in (REPROKIT / package).rglob("*.py") for module in _imports(path) if module in modules}
    assert used == set().union(*ALLOWED.values())
