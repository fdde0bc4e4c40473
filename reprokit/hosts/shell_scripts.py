"""The shell that runs on hosts, kept in files (``hosts/sh/``, package data, shellcheck-clean) and filled in here.

``session_step.sh`` is the session launcher's ``run.sh``, ``slurm_job.sh`` the Slurm launcher's ``job.sh``; both
inline ``step_parts.sh`` (the secrets taken, the exit code written: one spelling for both), and the session's also
``confine.sh`` (its cgroup, its mark, the reap), which ``reap`` and ``stop`` run on their own too. A template names
each value it takes as ``@NAME@``; every value is inserted once, never rescanned, and a name left unfilled is an
error here, never a script on a host.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SCRIPTS_DIR = Path(__file__).resolve().with_name("sh")
PLACEHOLDER = re.compile(r"@([A-Z_]+)@")
SHELL_DIRECTIVE = "# shellcheck shell=sh\n"  # a library's first line, for shellcheck alone


@cache
def script_text(name: str) -> str:
    return (SCRIPTS_DIR / name).read_text(encoding="utf-8")


def library(*names: str) -> str:
    """The libraries ``names``, as one block of shell to inline (their shellcheck directive left out)."""
    return "".join(script_text(name).removeprefix(SHELL_DIRECTIVE) for name in names).rstrip("\n")


def render(name: str, **values: str) -> str:
    """Template ``name`` with each ``@NAME@`` replaced by ``values[NAME]`` (already quoted for the shell)."""
    def value(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise KeyError(f"{SCRIPTS_DIR / name}: no value for @{match.group(1)}@")
        return values[match.group(1)]
    return PLACEHOLDER.sub(value, script_text(name))


__all__ = ["SCRIPTS_DIR", "library", "render", "script_text"]
