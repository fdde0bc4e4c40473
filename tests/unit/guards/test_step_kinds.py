"""A step kind is one module of reprokit/step_kinds/: the registry finds it, it imports only its package, the facts and
the typed errors (the kit schema imports it; its sections, reprokit/report/kind_sections/, draw), and the planner and the
report never name a kind."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprokit.step_kinds import NOT_KINDS, STEP_KINDS, StepKind

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
KINDS_DIR = REPROKIT / "step_kinds"
# the kind modules, found as the registry finds them: a new kind is a new module, and no list here names it
KIND_MODULES = sorted(info.name for info in pkgutil.iter_modules([str(KINDS_DIR)])
                      if info.name not in NOT_KINDS and not info.name.startswith("_"))
# what a kind module may import of reprokit: its package, the facts, the typed errors (reprokit/errors.py imports
# nothing of reprokit); what it draws is its module of reprokit/report/kind_sections/
MAY_IMPORT = ("reprokit.step_kinds", "reprokit.workloads.facts", "reprokit.errors")
EXCEPTIONS = {"reprokit.workloads.serve_stats"}  # the serve kind recomputes old records' figures as its workload does
THIRD_PARTY = {"pydantic"}
# modules that read the declarations and must not know a kind by name (the triage kind's control step,
# reprokit/plan/triage_step.py, is that kind's own code and may)
KIND_BLIND = ["plan/planner.py", "plan/inputs.py", "plan/control_steps.py", "plan/results.py", "report/html.py",
              "report/markdown.py", "report/sections.py", "report/kind_sections/__init__.py", "report/kind_sections/base.py",
              "draw/tables.py", "draw/svg.py", "kits/kit_check.py", "config/kit.py"]


def _imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert not node.level, f"{path}: relative import"
            modules.add(node.module)
    return modules


def test_a_kind_module_imports_only_primitives_and_facts():
    wrong = []
    for path in sorted(KINDS_DIR.glob("*.py")):
        for module in sorted(_imports(path)):
            top = module.split(".")[0]
            if top == "reprokit":
                if not module.startswith(MAY_IMPORT) and module not in EXCEPTIONS:
                    wrong.append(f"{path.name}: {module}")
            elif top not in sys.stdlib_module_names and top not in THIRD_PARTY:
                wrong.append(f"{path.name}: {module}")
    assert wrong == []


def test_the_kit_schema_loads_no_control_plane_through_the_kinds():
    """What `import reprokit.step_kinds` loads, in a fresh interpreter: the kinds and the facts, no drawing code."""
    code = "import sys, json, reprokit.step_kinds; print(json.dumps(sorted(m for m in sys.modules if m.startswith('reprokit'))))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       cwd=REPROKIT.parent).stdout)
    beyond = [m for m in loaded if m not in ("reprokit", "reprokit.workloads")
              and not m.startswith(MAY_IMPORT) and m not in EXCEPTIONS]
    assert beyond == []
    assert {"reprokit.step_kinds.serve", "reprokit.step_kinds.static_smem"} <= set(loaded)


def test_the_package_modules_are_the_files_of_its_directory():
    """pkgutil's reading of the package and the directory's own files agree, so no kind module goes unseen."""
    files = sorted(path.stem for path in KINDS_DIR.glob("*.py") if path.stem not in NOT_KINDS and not path.stem.startswith("_"))
    assert KIND_MODULES == files and len(files) >= 1


@pytest.mark.parametrize("module", KIND_MODULES)
def test_each_module_of_the_package_is_its_registered_kind(module):
    kind = getattr(importlib.import_module(f"reprokit.step_kinds.{module}"), "KIND", None)
    assert isinstance(kind, StepKind), f"reprokit/step_kinds/{module}.py defines no KIND"
    assert kind.name == module.replace("_", "-")  # a kind's module is named after it
    assert STEP_KINDS[kind.name] is kind


# a host kind that runs another kind's workload with other declarations (docs/architecture.md, "step kinds")
REUSES = {"serve-vllm-cpu": "serve-vllm"}


def test_a_host_kinds_name_leads_to_its_workload():
    """``tile-sweep`` runs ``reprokit.workloads.tile_sweep``: the kind's name, or the name of the kind it reuses."""
    astray = {name: kind.module for name, kind in STEP_KINDS.items() if kind.where == "host"
              and kind.module != "reprokit.workloads." + REUSES.get(name, name).replace("-", "_")}
    assert astray == {}
    assert {name: STEP_KINDS[name].module for name in REUSES} == {name: STEP_KINDS[REUSES[name]].module for name in REUSES}


def test_the_registry_holds_the_modules_kinds_and_no_other():
    assert sorted(STEP_KINDS) == sorted(module.replace("_", "-") for module in KIND_MODULES)


def test_the_planner_and_the_report_name_no_kind():
    named = []
    for rel in KIND_BLIND:
        for node in ast.walk(ast.parse((REPROKIT / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in STEP_KINDS:
                named.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert named == []
