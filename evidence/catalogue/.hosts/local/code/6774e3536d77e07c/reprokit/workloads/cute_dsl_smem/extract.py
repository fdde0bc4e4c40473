"""Upstream's host code of a CuTe-DSL kernel, out of its wheel, runnable against ``host_model``.

Only what sizes shared memory is taken: the kernel class's methods (``__init__``, the method that sets the
stage counts), the methods of the classes it imports from its own package (``DenseGemmKernel``'s
``_compute_stages``), the module's constant assignments, and the ``@cute.struct`` classes written inside its
methods. Each is upstream's text (``ast.unparse``), run in ``host_model.namespace()``; an ``import`` of CUTLASS,
CUDA or the package itself inside a method gives ``Opaque``.
"""

from __future__ import annotations

import ast
import builtins
import copy as ast_copy
from dataclasses import dataclass
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.cute_dsl_smem import host_model

MODELLED_PACKAGES = ("cutlass", "cuda", "torch", "triton")


@dataclass
class Module:
    member: str  # the wheel member, e.g. flashinfer/fused_moe/cute_dsl/blackwell_sm12x/moe_dynamic_kernel.py
    tree: ast.Module

    def defines_class(self, name: str) -> bool:
        try:
            self.class_def(name)
        except WorkloadError:
            return False
        return True

    def class_def(self, name: str) -> ast.ClassDef:
        """The class ``name`` defines, following a module-level alias (``Sm120...Kernel = DenseGemmKernel``)."""
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
        for node in self.tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                    and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
                return self.class_def(node.value.id)
        classes = [n.name for n in self.tree.body if isinstance(n, ast.ClassDef)]
        raise WorkloadError(Exit.BAD_PARAMS, f"{self.member} defines no class {name}; it has {', '.join(classes)}")

    def imported_classes(self, package: str) -> dict[str, tuple[str, str]]:
        """``{local name: (wheel member, class name)}`` for each ``from <package>.x import Y [as Z]``."""
        found = {}
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == package:
                for alias in node.names:
                    found[alias.asname or alias.name] = (node.module.replace(".", "/") + ".py", alias.name)
        return found

    def constants(self) -> list[ast.stmt]:
        """Module-level ``NAME = <expression>`` statements (``_SF_VEC_SIZE = 16``)."""
        return [n for n in self.tree.body if isinstance(n, ast.Assign)
                and all(isinstance(t, ast.Name) for t in n.targets)]


def _guarded_import(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    if level or name.split(".")[0] in MODELLED_PACKAGES or name.split(".")[0] == _guarded_import.package:
        return host_model.Cutlass() if name.split(".")[0] == "cutlass" else host_model.Opaque()
    return builtins.__import__(name, globals_, locals_, fromlist, level)


_guarded_import.package = ""


def _free_names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _function(node: ast.FunctionDef, namespace: dict[str, Any], where: str) -> Any:
    """The method as upstream wrote it, decorators other than ``staticmethod``/``classmethod`` dropped."""
    kept = [d for d in node.decorator_list if ast.unparse(d) in ("staticmethod", "classmethod")]
    copy = ast_copy.copy(node)
    copy.decorator_list, copy.returns = kept, None
    module = ast.fix_missing_locations(ast.Module(body=[copy], type_ignores=[]))
    local: dict[str, Any] = {}
    exec(compile(module, where, "exec"), namespace, local)  # noqa: S102 - upstream's own host code, on the model
    return local[node.name]


def load_class(modules: dict[str, Module], member: str, name: str, package: str, read: Any,
               namespace: dict[str, Any], depth: int = 0) -> type:
    """Class ``name`` of ``member`` with its methods, in ``namespace``; classes it imports from the package too."""
    module = modules.setdefault(member, Module(member, ast.parse(read(member))))
    node = module.class_def(name)
    methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
    _guarded_import.package = package
    namespace.setdefault("__builtins__", dict(vars(builtins), __import__=_guarded_import))
    for statement in module.constants():
        try:
            exec(compile(ast.fix_missing_locations(ast.Module(body=[statement], type_ignores=[])), member, "exec"),  # noqa: S102
                 namespace)
        except Exception:  # noqa: BLE001, S112 - a constant computed from what is not modelled is not needed
            continue
    if depth < 2:
        for local, (origin, class_name) in module.imported_classes(package).items():
            if local not in _free_names(methods) or local in namespace:
                continue
            helper = modules.setdefault(origin, Module(origin, ast.parse(read(origin))))
            if helper.defines_class(class_name):  # an imported function stays Opaque: it sizes nothing here
                namespace[local] = load_class(modules, origin, class_name, package, read, dict(namespace), depth + 1)
    for free in _free_names(methods):
        if free not in namespace and not hasattr(builtins, free):
            namespace[free] = host_model.Opaque()
    attributes = {m.name: _function(m, namespace, f"{member}:{name}.{m.name}") for m in methods}
    return type(name, (), attributes)


def struct_fields(cls_node: ast.ClassDef, namespace: dict[str, Any]) -> list[dict[str, Any]]:
    """Each field of a ``@cute.struct`` class laid out in order: its name, offset, bytes and alignment."""
    offset, fields = 0, []
    for item in cls_node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        expression = ast.unparse(item.annotation)
        try:
            field = eval(compile(ast.Expression(item.annotation), "<struct>", "eval"), namespace)  # noqa: S307
        except Exception as exc:  # noqa: BLE001
            raise WorkloadError(Exit.BAD_PARAMS, f"struct {cls_node.name}.{item.target.id}: cannot size"
                                f" {expression!r} ({type(exc).__name__}: {exc})") from None
        if not isinstance(field, host_model.Field):
            raise WorkloadError(Exit.BAD_PARAMS, f"struct {cls_node.name}.{item.target.id}: {expression!r} is not a"
                                " MemRange or Align of one")
        offset = -(-offset // field.align) * field.align
        fields.append({"name": item.target.id, "offset": offset, "bytes": field.bytes, "align": field.align})
        offset += field.bytes
    return fields


def find_struct(class_node: ast.ClassDef, struct: str) -> tuple[ast.ClassDef, ast.FunctionDef]:
    """The ``class <struct>`` written inside one of the kernel class's methods, and that method."""
    for method in class_node.body:
        if isinstance(method, ast.FunctionDef):
            for node in ast.walk(method):
                if isinstance(node, ast.ClassDef) and node.name == struct:
                    return node, method
    raise WorkloadError(Exit.BAD_PARAMS, f"class {class_node.name} has no struct {struct} in its methods")
