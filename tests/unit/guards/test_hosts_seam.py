"""The seam of `hosts/` and the record, held by the code's shape (AST): one writer of the record (the recorder), the
three registries the only way to a concrete access, launcher or runtime, and their names compared only inside them."""

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
RECORDER = REPROKIT / "records" / "recorder.py"  # the one writer of manifest.json and verdict.json
RECORD_FILES = {"MANIFEST", "VERDICT"}  # records/run_dir.py's names of the two files
WRITING_METHODS = {"create", "update", "set_step", "finish", "save"}  # what a record was written through, before the recorder


def _modules(root: Path = REPROKIT) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "workloads" not in p.relative_to(REPROKIT).parts)


def _name(node: ast.AST) -> str:
    """The last name of an expression (``run.record`` -> ``record``), or ""."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def manifest_writes(tree: ast.AST) -> list[int]:
    """Lines that set a field of a manifest (``record.manifest.x = ...``, ``manifest.x = ...``) or add to its steps."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            chain = target
            while isinstance(chain, (ast.Attribute, ast.Subscript)):
                chain = chain.value
                if _name(chain) == "manifest":
                    lines.append(node.lineno)
                    break
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("save", "append") \
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr in ("manifest", "steps"):
            lines.append(node.lineno)
    return lines


def record_writes(tree: ast.AST) -> list[int]:
    """Lines that call a record's writing method (``record.update(...)``, ``RunRecord.create(...)``, ``set_step``,
    ``finish``, ``save`` on anything named a record but the recorder) or write a file named ``MANIFEST`` or ``VERDICT``
    (``write_json_atomic(run_dir / VERDICT, ...)``, ``(run_dir / MANIFEST).write_text(...)``)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = _name(func)
        if isinstance(func, ast.Attribute) and called in WRITING_METHODS:
            receiver = _name(func.value).lower()
            if "record" in receiver and "recorder" not in receiver:
                lines.append(node.lineno)
                continue
        if called.startswith("write"):
            operands = [*node.args, *(k.value for k in node.keywords), *([func.value] if isinstance(func, ast.Attribute) else [])]
            if any(_name(n) in RECORD_FILES for operand in operands for n in ast.walk(operand)):
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


def test_only_the_recorder_writes_the_record():
    # every module but the workloads, which import nothing of the record (test_workload_imports.py)
    found = {str(p.relative_to(REPROKIT)): lines for p in _modules() if p != RECORDER
             and (lines := sorted(manifest_writes(tree := ast.parse(p.read_text())) + record_writes(tree)))}
    assert found == {}, "say what happened as an event (records/events.py); the recorder (records/recorder.py) writes it"


def test_the_recorder_is_where_the_record_is_written():
    tree = ast.parse(RECORDER.read_text())
    assert manifest_writes(tree) and record_writes(tree), "the guard above would not see the recorder's own writes"


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
    writes = ast.parse("manifest = record.manifest\nmanifest.status = RunStatus.KILLED\nrun.record.update(in_flight=None)\n"
                       "record.set_step(entry)\nRunRecord.create(runs_dir, run_id)\nself.record.finish('complete')\n"
                       "write_json_atomic(run_dir / VERDICT, verdict.to_json())\n(run_dir / MANIFEST).write_text(text)\n"
                       "recorder.record(StepEnded(entry))\nRecorder.create(runs_dir, run_id)\nexecutor.finish()\n"
                       "values.update(more)\nwrite_json_atomic(out_dir / 'result.json', result)\nmanifest = load_manifest(d)\n")
    assert manifest_writes(writes) == [2]
    assert record_writes(writes) == [3, 4, 5, 6, 7, 8]
