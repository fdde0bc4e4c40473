"""Workloads import nothing from the control plane: they run on the GPU host from a copy of reprokit/workloads."""

from __future__ import annotations

import ast
from pathlib import Path

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
WORKLOADS = REPROKIT / "workloads"


def _package_of(path: Path) -> str:
    return ".".join(path.relative_to(REPROKIT.parent).with_suffix("").parts[:-1])


def _imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, relative ones resolved, import_module calls too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found += [(node.lineno, module)]
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names if module == "reprokit"]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, str(node.args[0].value)))
    return found


def test_no_workload_imports_the_control_plane() -> None:
    offending = [f"{path.relative_to(REPROKIT.parent)}:{line}: {module}"
                 for path in sorted(WORKLOADS.rglob("*.py"))
                 for line, module in _imported_modules(path, _package_of(path))
                 if (module == "reprokit" or module.startswith("reprokit.")) and module != "reprokit.workloads"
                 and not module.startswith("reprokit.workloads.")]
    assert offending == []


def test_the_guard_sees_relative_and_dynamic_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from ... import runner\nfrom ...triage import api\nimport importlib\n"
                     "importlib.import_module('reprokit.hosts.ssh')\n", encoding="utf-8")
    modules = [module for _, module in _imported_modules(probe, "reprokit.workloads.tile_sweep")]
    assert modules == ["reprokit", "reprokit.runner", "reprokit.triage", "importlib", "reprokit.hosts.ssh"]
