"""Quoting for every value that reaches a remote shell: the one place commands for hosts are spelled.

Inventory values (``workdir``, the Python interpreter), kit values (step names, image references) and flags
all end up in ``sh -c`` strings on the GPU host. Pasting any of them into a command unquoted let a workdir
such as ``/srv/x;touch /tmp/owned`` run code there, and one with a space made ``rm -rf`` hit a sibling
directory. Build remote commands only with ``quote``/``join``/``path`` from here.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterable


class UnquotableValue(ValueError):
    """A NUL byte cannot be passed through any shell word."""


def quote(value: object) -> str:
    """One shell word for ``value``, whatever it contains (``;``, spaces, quotes, ``$( )``, newlines)."""
    text = str(value)
    if "\0" in text:
        raise UnquotableValue(f"{text!r} contains a NUL byte; it cannot reach a remote shell")
    return shlex.quote(text)


def join(argv: Iterable[object]) -> str:
    """A command line of quoted words."""
    return " ".join(quote(arg) for arg in argv)


def path(*parts: str) -> str:
    """A quoted remote path joined from ``parts``."""
    return quote(posixpath.join(*parts))


__all__ = ["UnquotableValue", "join", "path", "quote"]
