"""Shell completion of what reprokit's arguments name: kits (every layer) and inventory hosts and groups.

Invoke completes task names and flags (``--complete``); the values of reprokit's arguments it leaves to the shell's
file completion. ``candidates`` answers for the values it knows: a kit where a task takes one (``repro KIT``,
``--kit``), a host after ``--host`` / ``-H``, a group after ``--group`` / ``-g``, read from the inventory the
command line names (``-i``) or the default one, and the kits from the ``-K`` directory on top of the layers.
Anything else (``None``) goes to Invoke's own completion. A broken inventory completes nothing rather than failing:
the shell is not the place for its error.
"""

from __future__ import annotations

from collections.abc import Callable

from reprokit.config.layers import kit_path
from reprokit.errors import ReprokitError

KIT_FLAGS = ("--kit", "-k")
HOST_FLAGS = ("--host", "-H")
GROUP_FLAGS = ("--group", "-g")
KIT_POSITIONAL_TASKS = ("repro", "new-kit")  # tasks whose first positional argument is a kit name (new-kit: taken ones)


def _value_of(tokens: list[str], flags: tuple[str, ...]) -> str | None:
    for before, after in zip(tokens, tokens[1:]):
        if before in flags:
            return after
    return None


def _kits(tokens: list[str]) -> list[str]:
    return list(kit_path(None, _value_of(tokens, ("--kits-dir", "-K"))).kits())


def _inventory(tokens: list[str], default_inventory: str) -> tuple[list[str], list[str]]:
    from reprokit.hosts.axes import load_inventory  # noqa: PLC0415 - only a host completion pays for Ansible

    try:
        inventory = load_inventory(_value_of(tokens, ("--inventory", "-i")) or default_inventory)
    except ReprokitError:
        return [], []
    return sorted(inventory.hosts), sorted(inventory.groups)


def candidates(tokens: list[str], task_names: list[str], default_inventory: str) -> list[str] | None:
    """What completes the last word of ``tokens`` (the words after the program's name, the partial word last or
    absent), or ``None`` when it is Invoke's to complete (a task name, a flag)."""
    if not tokens:
        return None
    answers: dict[tuple[str, ...], Callable[[], list[str]]] = {
        KIT_FLAGS: lambda: _kits(tokens),
        HOST_FLAGS: lambda: _inventory(tokens, default_inventory)[0],
        GROUP_FLAGS: lambda: _inventory(tokens, default_inventory)[1],
    }
    for flags, answer in answers.items():  # `-H <TAB>` (the flag is last) or `-H h<TAB>` (the flag just before)
        if tokens[-1] in flags or (len(tokens) > 1 and tokens[-2] in flags and not tokens[-1].startswith("-")):
            return answer()
    tasks = [i for i, t in enumerate(tokens) if t in task_names]
    if tasks and tokens[tasks[-1]] in KIT_POSITIONAL_TASKS:
        after = tokens[tasks[-1] + 1:]
        if not after:  # `repro <TAB>`; the shell's empty word is not passed on, so the task itself stays a candidate
            return [tokens[tasks[-1]], *_kits(tokens)]
        if len(after) == 1 and not after[0].startswith("-"):  # `repro ep<TAB>`
            return _kits(tokens)
    return None
