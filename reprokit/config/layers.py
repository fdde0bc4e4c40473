"""Where reprokit finds its data: kits in layers (later wins), the shipped Dockerfiles and playbook, the runs.

An installed reprokit (``pipx install``) carries the top-level ``kits/``, ``docker/`` and ``ansible/`` of its
checkout inside the package, under ``reprokit/shipped/`` (``setup.py`` copies them at build time, so whatever those
folders hold when the wheel is built is what ships). Run from a checkout, the folders themselves are the built-in
layer. Above the built-in kits come the user's (``$XDG_CONFIG_HOME/reprokit/kits``), the project's (``./kits``) and
the one given with ``-K DIR`` (or the config key ``reprokit.kits_dir``): a kit of the same name in a later layer
replaces the earlier one, and ``invoke kits`` says which layer each kit came from. A kit's model files
(``models/<name>.yml``) are found the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import reprokit

PACKAGE_DIR = Path(reprokit.__file__).resolve().parent
SHIPPED_DIR = PACKAGE_DIR / "shipped"  # the wheel's copy of kits/, docker/, ansible/
# What makes the current directory a project: its records then go to ./runs, as in a checkout.
PROJECT_MARKERS = ("kits", "inventory.yml", "reprokit.yaml", "invoke.yaml", "runs")


def is_installed() -> bool:
    """An installed copy (the wheel's ``shipped/`` is there), not a checkout or an editable install."""
    return (SHIPPED_DIR / "kits").is_dir()


def builtin_root() -> Path:
    """The folder holding the built-in ``kits/``, ``docker/`` and ``ansible/``: the wheel's copy, else the checkout."""
    return SHIPPED_DIR if is_installed() else PACKAGE_DIR.parent


def _xdg(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable)
    return Path(value) if value and Path(value).is_absolute() else Path.home() / fallback  # XDG: relative is invalid


def user_kits_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "reprokit" / "kits"


def user_runs_dir() -> Path:
    """Where the records of a run started outside a project go (``$XDG_DATA_HOME/reprokit/runs``)."""
    return _xdg("XDG_DATA_HOME", ".local/share") / "reprokit" / "runs"


def images_state_dir() -> Path:
    """Where ``invoke build`` remembers what it built per host: the checkout's ``.reprokit/images``, or for an
    installed copy ``$XDG_DATA_HOME/reprokit/images`` (never inside the installed package)."""
    if is_installed():
        return _xdg("XDG_DATA_HOME", ".local/share") / "reprokit" / "images"
    return builtin_root() / ".reprokit" / "images"


def is_project(directory: Path | None = None) -> bool:
    directory = directory or Path.cwd()
    return any((directory / marker).exists() for marker in PROJECT_MARKERS)


def default_runs_dir() -> Path:
    """``runs`` (relative, as the checkout always had it) in a project, else the user's data directory."""
    return Path("runs") if is_project() else user_runs_dir()


@dataclass(frozen=True)
class Layer:
    source: str  # built-in, user, project, -K (the flag), config (the config key reprokit.kits_dir)
    path: Path


class KitPath:
    """The kit directories in order, later winning. As a path (``os.fspath``) it is the directory new kits are
    written to and a CI diff is read against (``top``): the one given, else the project's ``kits``, else (outside a
    project) the user's."""

    def __init__(self, layers: list[Layer], top: Path, top_source: str = "-K"):
        kept: dict[Path, Layer] = {}
        for layer in layers:  # the same directory twice (a checkout's built-in kits are its ./kits): the later name
            kept.pop(layer.path.resolve(), None)
            kept[layer.path.resolve()] = layer
        self.layers = tuple(kept.values())
        self.top = top
        self.top_source = top_source  # the layer that top is, once it holds a kit

    def __fspath__(self) -> str:
        return str(self.top)

    def __str__(self) -> str:
        return ", ".join(str(layer.path) for layer in self.layers) or str(self.top)

    def kits(self) -> dict[str, tuple[Path, str]]:
        """Every kit by name: its file and the layer it came from (the last layer that has it)."""
        found: dict[str, tuple[Path, str]] = {}
        for layer in self.layers:
            for path in sorted(layer.path.glob("*.yml")):
                found[path.stem] = (path, layer.source)
        return dict(sorted(found.items()))

    def model_files(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for layer in self.layers:
            for path in sorted((layer.path / "models").glob("*.yml")):
                found[path.stem] = path
        return dict(sorted(found.items()))

    def models_dir(self) -> Path:
        """Where a missing model would be looked for first: the top layer that has a models/ folder."""
        with_models = [layer.path / "models" for layer in self.layers if (layer.path / "models").is_dir()]
        return with_models[-1] if with_models else self.top / "models"


def kit_path(kits_dir: KitPath | Path | str | None = None, given_dir: str | Path | None = None,
             given_source: str = "-K") -> KitPath:
    """A ``KitPath`` from what callers hold. A plain directory is a single layer (what a test or ``load_kit(name,
    DIR)`` means); ``None`` means the layers: built-in, user, ``./kits``, and ``given_dir`` (``-K``) on top."""
    if isinstance(kits_dir, KitPath):
        return kits_dir
    if kits_dir is not None:
        return KitPath([Layer("-K", Path(kits_dir))], Path(kits_dir))
    layers = [Layer("built-in", builtin_root() / "kits"), Layer("user", user_kits_dir())]
    project = Path("kits")
    if project.is_dir():
        layers.append(Layer("project", project))
    if given_dir is not None:
        layers.append(Layer(given_source, Path(given_dir)))
    if given_dir is not None:
        top = layers[-1]
    elif is_project():
        top = Layer("project", project)
    else:  # outside a project a new kit is the user's
        top = Layer("user", user_kits_dir())
    return KitPath([layer for layer in layers if layer.path.is_dir()], top.path, top.source)


def ansible_dir() -> Path:
    """``site.yml``, ``ansible.cfg`` and ``roles/`` of ``invoke provision`` (next to ``docker/``, which it reads)."""
    return builtin_root() / "ansible"
