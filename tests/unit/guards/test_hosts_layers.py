"""The hosts layer in layers: one transport owns the SSH libraries, the runtimes own docker, the runner sees a protocol."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPROKIT = Path(__file__).resolve().parents[3] / "reprokit"
SSH_LIBRARIES = ("paramiko", "fabric")
TRANSPORT_LAYER = {"hosts/ssh.py", "hosts/transport.py", "hosts/ssh_config.py"}  # ssh_config: paramiko's parser only
DOCKER_COMMAND = re.compile(r"\bdocker\s+(run|rm|version|image|inspect|exec|ps|kill|stop|pull)\b")
RUNTIME_AGNOSTIC = ["hosts/host_executor.py", "hosts/launchers/session.py", "hosts/launchers/slurm.py", "hosts/transport.py",
                    "hosts/pullback.py", "hosts/executor.py", "hosts/access/local.py", "hosts/access/ssh.py"]


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants that are not docstrings (f-string parts included)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_only_the_transport_layer_imports_the_ssh_libraries():
    users = sorted(str(path.relative_to(REPROKIT)) for path in REPROKIT.rglob("*.py")
                   if _imports(ast.parse(path.read_text(encoding="utf-8"))) & set(SSH_LIBRARIES))
    assert set(users) <= TRANSPORT_LAYER, f"{set(users) - TRANSPORT_LAYER} import {SSH_LIBRARIES}: go through hosts/transport.py"


def test_docker_commands_are_spelled_by_the_runtime_alone():
    for name in RUNTIME_AGNOSTIC:
        spelled = [s for s in _code_strings(ast.parse((REPROKIT / name).read_text(encoding="utf-8")))
                   if DOCKER_COMMAND.search(s)]
        assert spelled == [], f"{name} builds docker commands ({spelled[:2]}); that is hosts/runtimes/docker.py's job"


def test_the_runner_drives_the_executor_protocol():
    """The run's phases hold the executor typed as the protocol (a parameter, or ``PreparedRun.executor``)."""
    sources = [REPROKIT / "run" / "kit_run.py", REPROKIT / "plan" / "staging.py", *sorted((REPROKIT / "phases").glob("*.py"))]
    annotations: dict[str, str] = {}
    untyped = []
    for source in sources:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for arg in node.args.args:
                    if arg.arg == "executor":
                        (untyped.append(node.name) if arg.annotation is None
                         else annotations.__setitem__(f"{source.name}:{node.name}", ast.unparse(arg.annotation)))
            elif isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "executor":
                annotations[f"{source.name}:attribute"] = ast.unparse(node.annotation)
    assert "prepare.py:attribute" in annotations and "staging.py:stage_inputs" in annotations, annotations
    assert untyped == [] and set(annotations.values()) == {"Executor"}, (untyped, annotations)
