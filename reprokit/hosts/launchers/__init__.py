"""Launchers, by the inventory's ``launcher``: the one list of their names.

A launcher starts a step and returns its ``Handle``, polls it, follows its log, stops it, collects its files and
reaps what it left (the protocol in ``hosts/launch.py``). Each is built on a host's ``Connection`` and its
``Puller`` (``access/``), whatever the access: the session launcher runs this machine's steps as an SSH host's.
"""

from __future__ import annotations

from reprokit.hosts.launchers.session import SessionLauncher
from reprokit.hosts.launchers.slurm import SlurmLauncher

LAUNCHERS: dict[str, type[SessionLauncher | SlurmLauncher]] = {"session": SessionLauncher, "slurm": SlurmLauncher}

__all__ = ["LAUNCHERS"]
