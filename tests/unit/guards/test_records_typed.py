"""A record is read through its typed models: only reprokit/records names the manifest's and the verdict's files."""

from __future__ import annotations

import ast
from pathlib import Path

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
RECORD_FILES = ("manifest.json", "verdict.json")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_only_the_records_package_names_the_record_files() -> None:
    found = []
    for path in sorted(REPROKIT.rglob("*.py")):
        if path.is_relative_to(REPROKIT / "records"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and any(name in node.value for name in RECORD_FILES)):
                found.append(f"{path.relative_to(REPROKIT.parent)}:{node.lineno}: {node.value!r}")
    # read them with records.run_dir.load_manifest / load_verdict (typed, validated), name them with MANIFEST / VERDICT
    assert found == []
