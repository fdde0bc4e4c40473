"""The build step that ships the checkout's top-level data folders inside the package.

``kits/``, ``docker/``, ``ansible/`` and ``docs/`` stay at the top of the repository (where people and CI read them); the wheel
carries a copy of each under ``reprokit/shipped/`` (``reprokit.config.layers`` finds them there), whatever they hold
when the wheel is built. An editable install copies nothing: the checkout's folders are read in place.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("kits", "docker", "ansible", "docs")  # docs: what the help and the messages point at, installed too
NEVER = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


class BuildPyWithShipped(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "reprokit" / "shipped"
        for name in SHIPPED:
            if (target / name).exists():
                shutil.rmtree(target / name)
            shutil.copytree(root / name, target / name, ignore=NEVER)


setup(cmdclass={"build_py": BuildPyWithShipped})
