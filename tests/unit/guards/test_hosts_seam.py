"""The seam of `hosts/` and the record, held by the code's shape (AST): one writer of the manifest, the three
registries the only way to a concrete access, launcher or runtime, and their names compared only inside them."""

from __future__ import annotations

import ast
from pathlib import Path

from reprokit.hosts.access import ACCESS
from reprokit.hosts.launchers import LAUNCHERS
from reprokit.hosts.runtimes import RUNTIMES

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
REGISTRIES = ("reprokit.hosts.access", "reprokit.hosts.launchers", "reprokit.hosts.runtimes")
# the registries, and the SSH access's own settings (ssh.py: which connections it takes, below access/ssh.py)
REGISTRY_DIRS = (*(REPROKIT / "hosts" / name for name in ("access", "launchers", "runtimes")), REPROKIT / "hosts" / "ssh.py")
PUBLIC = {"ACCESS", "LAUNCHERS", "RUNTIMES", "CommandResult", "Connection", "Puller", "Runtime", "StepPlace", "runtime_for"}
AXIS_NAMES = set(ACCESS) | set(LAUNCHERS) | set(RUNTIMES)
PHASES = [*sorted((REPROKIT / "phases").glob("*.py")), REPROKIT / "run" / "kit_run.py"]


def _modules(root: Path = REPROKIT) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "workloads" not in p.relative_to(REPROKIT).parts)


def manifest_writes(tree: ast.AST) -> list[int]:
    """Lines that set a field of a record's manifest (``record.manifest.x = ...``) or save it, bypassing the record."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            chain = target
            while isinstance(chain, (ast.Attribute, ast.Subscript)):
                chain = chain.value
                if isinstance(chain, ast.Attribute) and chain.attr == "manifest":
                    lines.append(node.lineno)
                    break
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("save", "append") \
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr in ("manifest", "steps"):
            lines.append(node.lineno)
    return lines


def concrete_imports(tree: ast.AST) -> list[str]:
    """Imports of a registry's modules, or of anything but its registry and protocols."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith(tuple(f"{r}." for r in REGISTRIES)):
                found.append(f"{node.lineno}: from {node.module}")
            elif node.module in REGISTRIES:
                found += [f"{node.lineno}: {a.name}" for a in node.names if a.name not in PUBLIC]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.startswith(REGISTRIES)]
    return found


def axis_comparisons(tree: ast.AST) -> list[str]:
    """Comparisons with an axis name spelled as a string (``host.launcher == "slurm"``, ``in ("docker", ...)``)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        words = [c.value for o in operands for c in ([o] if isinstance(o, ast.Constant) else getattr(o, "elts", []))
                 if isinstance(c, ast.Constant) and c.value in AXIS_NAMES]
        found += [f"{node.lineno}: {word!r}" for word in words]
    return found


def test_no_phase_writes_the_manifest_itself():
    found = {str(p.relative_to(REPROKIT)): lines for p in PHASES if (lines := manifest_writes(ast.parse(p.read_text())))}
    assert found == {}, "a phase returns what happened; the record (records/run_dir.py) writes it"


def test_nothing_outside_hosts_imports_a_concrete_access_launcher_or_runtime():
    found = {str(p.relative_to(REPROKIT)): hits for p in _modules()
             if "hosts" not in p.relative_to(REPROKIT).parts[:1] and (hits := concrete_imports(ast.parse(p.read_text())))}
    assert found == {}, "reach a host through hosts.factory (executor_for, connection_for) and the protocols"


def test_no_axis_name_is_compared_as_a_string_outside_its_registry():
    found = {str(p.relative_to(REPROKIT)): hits for p in _modules()
             if not str(p).startswith(tuple(map(str, REGISTRY_DIRS))) and (hits := axis_comparisons(ast.parse(p.read_text())))}
    assert found == {}, "ask the registry's class (in_batch_job, in_container, is_this_machine), never its name"


def test_the_guards_catch_what_they_guard_against():
    sample = ast.parse("record.manifest.in_flight = None\nrecord.manifest.steps.append(e)\n"
                       "from reprokit.hosts.launchers.slurm import SlurmLauncher\nfrom reprokit.hosts.access import ACCESS\n"
                       "from reprokit.hosts.runtimes import DockerRuntime\nif host.launcher != 'slurm': pass\n"
                       "ok = host.runtime in ('docker', 'podman')\n")
    assert manifest_writes(sample) == [1, 2]
    assert concrete_imports(sample) == ["3: from reprokit.hosts.launchers.slurm", "5: DockerRuntime"]
    assert axis_comparisons(sample) == ["6: 'slurm'", "7: 'docker'"]
