"""Which kit and host names can name things on disk and on hosts: run directories, container names, locks.

A run id is ``<time>-<kit>-<host>-<hex>`` and becomes ``runs/<id>/``, a remote directory and a container name,
so a ``/`` in a host name once put a whole record outside ``runs/``. One rule, Docker's for container names.
"""

from __future__ import annotations

import re

from reprokit.errors import ConfigError

SAFE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(kind: str, name: str, where: str | None = None) -> str:
    """``name`` unchanged, or a ConfigError naming ``where`` (file:line) when it cannot name a run's files."""
    if not isinstance(name, str) or not SAFE_NAME_RE.fullmatch(name) or ".." in name:
        prefix = f"{where}: " if where else ""
        raise ConfigError(f"{prefix}{kind} name {name!r} cannot name a run directory; use letters, digits, '.', '_' and"
                          " '-' (no '/', spaces or '..'), starting with a letter or digit")
    return name
