"""How the control plane reaches a host, by the inventory's ``ansible_connection``: the one list of access names.

Each entry is a ``Connection`` class (``base.py``) with ``open_for(host, inventory, options, say, runs_dir)``.
A new access (Kubernetes' ``kubectl exec``, say) is one module here and one line below.
"""

from __future__ import annotations

from reprokit.hosts.access.base import CommandResult, Connection, Puller
from reprokit.hosts.access.local import LocalConnection
from reprokit.hosts.access.ssh import SSHConnection

ACCESS: dict[str, type[LocalConnection] | type[SSHConnection]] = {"local": LocalConnection, "ssh": SSHConnection}

__all__ = ["ACCESS", "CommandResult", "Connection", "Puller"]
