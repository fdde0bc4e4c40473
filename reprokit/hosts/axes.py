"""The names of a host's three axes, read from their registries, and the inventory loaded against them.

``config/`` sits below ``hosts/`` and cannot import the registries; it validates against the ``HostAxes`` it is
given, and this module gives it the registries' keys, so each name has one list: its package's ``__init__``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from reprokit.config.inventory import HostAxes, Inventory, read_inventory
from reprokit.hosts.access import ACCESS
from reprokit.hosts.launchers import LAUNCHERS
from reprokit.hosts.runtimes import RUNTIMES


@cache
def host_axes() -> HostAxes:
    return HostAxes(
        accesses=tuple(ACCESS),
        launchers=tuple(LAUNCHERS),
        runtimes=tuple(RUNTIMES),
        batch_launchers=tuple(name for name, launcher in LAUNCHERS.items() if launcher.in_batch_job),
        container_runtimes=tuple(name for name, runtime in RUNTIMES.items() if runtime.in_container),
        here=tuple(name for name, access in ACCESS.items() if access.reaches_this_machine),
    )


def load_inventory(path: Path | str | None) -> Inventory:
    """The inventory at ``path`` (``config.inventory.read_inventory``), each host's axes checked against the registries."""
    return read_inventory(path, host_axes())


__all__ = ["host_axes", "load_inventory"]
