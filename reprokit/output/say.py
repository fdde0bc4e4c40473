"""How a module below the front ends tells the user something: a ``Say`` it is given.

Only the front ends (``reprokit/commands/``) print; they pass their printer down. A caller that passes
none (a test, a library user) hears nothing, rather than the module opening the terminal itself.
"""

from __future__ import annotations

from collections.abc import Callable

Say = Callable[[str], None]


def silent(_message: str) -> None:
    """The default ``Say``: says nothing."""
