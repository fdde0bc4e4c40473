"""The order of the layers, checked on the code (AST), not remembered.

The order is stated once, in docs/architecture.md ("The order of the layers"), and read from there: every package
and top-level module of reprokit/ stands on one line of it, top first. A module may import only what stands on a
line below its own; no modules may import each other round a cycle. Imports inside functions count (they are arrows
all the same), and so do relative imports and ``importlib.import_module("reprokit....")`` with a literal name.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
REPROKIT = REPO / "reprokit"
ARCHITECTURE = REPO / "docs" / "architecture.md"
MARK = "<!-- layer order:"

# Modules exempt from the order among themselves: none. The last cycle (commands/* -> program -> tasks ->
# commands/*) was broken by moving the task helpers into commands/tasking.py, below the task modules.
KNOWN_CYCLE: frozenset[str] = frozenset()
# the report reads records, not workload code; the facts are for every layer (beyond what the order says)
NEVER = [("report", "workloads")]
FACTS = "reprokit.workloads.facts"


def layers() -> list[tuple[str, ...]]:
    """The doc's order: the fenced block after the marker, one layer a line, top first."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text[text.index(MARK):].split("```text\n", 1)[1].split("```", 1)[0]
    return [tuple(line.split("#", 1)[0].split()) for line in block.splitlines() if line.split("#", 1)[0].strip()]


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in sorted(REPROKIT.rglob("*.py"))}


def unit(module: str) -> str:
    """The package or top-level module of reprokit/ a module belongs to (``reprokit`` for the package's own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "reprokit"


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> set[str]:
    """The modules of reprokit that ``module`` imports anywhere in its text."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return {target for name in names if name.split(".")[0] == "reprokit"
            and (target := _resolve(name)) is not None and target != module}


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_order_names_every_package_and_module_once() -> None:
    listed = [name for layer in layers() for name in layer]
    assert sorted(name for name in set(listed) if listed.count(name) > 1) == []
    assert sorted(set(listed) ^ {unit(module) for module in MODULES}) == []


def test_no_module_imports_against_the_order() -> None:
    rank = {name: depth for depth, layer in enumerate(layers()) for name in layer}  # 0 is the top
    against = [f"{MODULES[module].relative_to(REPO)}: {target} ({unit(module)} may import only the layers below it)"
               for module, targets in GRAPH.items() for target in sorted(targets)
               if unit(target) != unit(module) and rank[unit(target)] <= rank[unit(module)]
               and not {module, target} <= KNOWN_CYCLE]
    assert against == []


def test_no_modules_import_each_other_round_a_cycle() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_on_a_small_graph() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"x": {"y"}, "y": set()}) == []


def test_the_report_reads_no_workload_code() -> None:
    broken = [f"{MODULES[module].relative_to(REPO)}: {target}" for package, forbidden in NEVER
              for module, targets in GRAPH.items() if unit(module) == package
              for target in sorted(targets) if unit(target) == forbidden and not target.startswith(FACTS)]
    assert broken == []


def test_the_kit_schema_loads_only_the_layers_below_it() -> None:
    """What `import reprokit.config.kit` loads, in a fresh interpreter: the kinds it discovers included."""
    code = "import sys, json, reprokit.config.kit; print(json.dumps(sorted(m for m in sys.modules if m.startswith('reprokit'))))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       cwd=REPO).stdout)
    rank = {name: depth for depth, layer in enumerate(layers()) for name in layer}
    above = [module for module in loaded if re.match(r"reprokit(\.|$)", module) and rank[unit(module)] < rank["config"]]
    assert above == []
