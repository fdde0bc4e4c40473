"""An import-time stand-in for torch, for compiling the kernels of a package that imports torch on a host without it.

triton_kernels (vLLM's ``vllm/third_party/triton_kernels``) imports torch at the top of its modules for its host
code: dataclass annotations, dtype tables, ``torch.nn.functional`` helpers. Its ``@triton.jit`` functions never run
torch, and a compile-only driver launches nothing, so names that resolve to inert placeholders are all the import
needs. The real torch is used wherever it is installed; the result says which one the compile had.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types


class Placeholder:
    """Any attribute of the stand-in: callable, subscriptable, usable in ``X | None`` annotations and as a base."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, item: str) -> Placeholder:
        return Placeholder(f"{self._name}.{item}")

    def __call__(self, *args, **kwargs) -> Placeholder:
        return Placeholder(f"{self._name}()")

    def __getitem__(self, item) -> Placeholder:
        return self

    def __or__(self, other) -> Placeholder:
        return self

    def __ror__(self, other) -> Placeholder:
        return self

    def __mro_entries__(self, bases) -> tuple[type, ...]:
        return (object,)

    def __repr__(self) -> str:
        return f"<torch stand-in {self._name}>"


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda item, _name=spec.name: Placeholder(f"{_name}.{item}")
        module.__reprokit_standin__ = True
        return module

    def exec_module(self, module) -> None:
        return None


def ensure_importable() -> str:
    """``torch``'s version where it imports, else install the stand-in and say so (``"stand-in"``)."""
    if importlib.util.find_spec("torch") is not None:
        try:
            import torch  # noqa: PLC0415
        except Exception:  # noqa: BLE001 - a torch that cannot load (no CUDA libraries) is as good as none here
            for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
                del sys.modules[name]
        else:
            if not getattr(torch, "__reprokit_standin__", False):
                return str(getattr(torch, "__version__", "unknown"))
    if not any(isinstance(finder, _StandIn) for finder in sys.meta_path):
        sys.meta_path.insert(0, _StandIn())
    return "stand-in"
