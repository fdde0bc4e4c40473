"""What the task modules of ``reprokit.commands`` are built with: the task class, the groups, ``call``, the config.

Every module of ``reprokit.commands`` declares its tasks with ``task`` (short flags from one table, ``--quiet`` and
``--verbose`` on every task), gathers them with ``group`` and hands its front ends to ``call``, which turns an
``ExitCode`` or a ``ReprokitError`` into ``invoke.Exit``. ``root`` puts every group's tasks flat into the namespace of
``invoke`` and ``reprokit`` (``reprokit/cli/tasks.py``), so the documented names stay (``invoke repro``, not
``invoke run.repro``). This module sits below the task modules and imports none of them; the programs that parse the
command line (``reprokit/cli/program.py``) sit above.
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import invoke
from invoke import Collection, Exit
from invoke.parser import Argument
from invoke.tasks import Task

from reprokit.commands import console
from reprokit.commands.console import as_typed
from reprokit.config import layers
from reprokit.errors import ExitCode, ReprokitError
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS
from reprokit.output import verbosity
from reprokit.output.hosttext import shown

# One short flag per long flag, the same in every task; `-h` stays Invoke's --help.
SHORT_FLAGS = {
    "host": "H", "group": "g", "inventory": "i", "runs-dir": "r", "kits-dir": "K", "json": "j", "quiet": "q",
    "kit": "k", "image": "I", "only": "o", "skip": "s", "set": "S", "arch": "a", "flashinfer": "f",
    "tags": "t", "skip-tags": "T", "extra-vars": "e", "limit": "l", "check": "C", "diff": "D", "user": "u",
    "verbose": "v",
}

# Where reprokit's files are, unless invoke.yaml / reprokit.yaml (project, user, system) or the environment
# (INVOKE_REPROKIT_RUNS_DIR for `invoke`, REPROKIT_REPROKIT_RUNS_DIR for `reprokit`) say otherwise.
CONFIG_DEFAULTS = {
    "kits_dir": None,  # None: the layers alone (built-in, user, ./kits); a directory: one more layer on top
    "inventory": "inventory.yml",
    "runs_dir": None,  # None: ./runs in a project, else $XDG_DATA_HOME/reprokit/runs (reprokit.config.layers)
    "known_hosts": str(DEFAULT_KNOWN_HOSTS),
    "ssh_config": None,  # None: ~/.ssh/config when it exists
    "max_pull_bytes": None,  # what one run may bring back from its host (e.g. 200G); None: 64 GiB
    "max_pull_files": None,  # how many files one run may bring back from its host; None: 100 000
}


def for_developers(*tasks: Task) -> None:
    """Tasks that maintain this repository or drive its CI (lint, lock, changed-kits, ci-verdict): they run as any
    task, and the task lists shown to users leave them out (docs/development.md lists them)."""
    for each in tasks:
        each.for_developers = True  # type: ignore[attr-defined]


COLOR_HELP = "auto (colour on a terminal, none where NO_COLOR is set), always, or never"


class ReprokitTask(Task):
    """A task whose flags take their short names from ``SHORT_FLAGS``; a positional listed as iterable takes many values;
    every task takes ``--quiet`` and ``--verbose``, which mean the same everywhere (``reprokit.output.verbosity``)."""

    def get_arguments(self, ignore_unknown_help: bool | None = None) -> list[Any]:
        # Invoke consumes the help dict while it builds the arguments: keep it for the next call (a second Program run).
        saved = dict(self.help)
        try:
            arguments = super().get_arguments(ignore_unknown_help)
        finally:
            self.help = saved
        declared = {argument.name for argument in arguments}
        colour = [] if "color" in declared else [Argument(names=("color",), kind=str, default="auto", help=COLOR_HELP)]
        return arguments + [Argument(names=(name, SHORT_FLAGS[name]), kind=bool, default=False,
                                     help=verbosity.HELP[name]) for name in verbosity.HELP if name not in declared] + colour

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        declared = inspect.signature(self.body).parameters
        flags = {name: bool(kwargs.get(name) if name in declared else kwargs.pop(name, False)) for name in verbosity.HELP}
        colour = kwargs.get("color") if "color" in declared else kwargs.pop("color", "auto")
        try:
            verbosity.set_from_flags(**flags)
            console.set_color(colour)
        except ReprokitError as exc:
            raise Exit(error_line(exc), code=int(exc.exit_code)) from None
        return super().__call__(*args, **kwargs)

    def arg_opts(self, name: str, default: Any, taken_names: set[str]) -> dict[str, Any]:
        opts = super().arg_opts(name, default, taken_names)
        long_name = opts["names"][0]
        short = SHORT_FLAGS.get(long_name)
        opts["names"] = [long_name] + ([short] if short and short not in taken_names else [])
        if opts["positional"] and opts.get("kind") is list:
            opts["default"] = []
        return opts


def task(*args: Any, **kwargs: Any) -> Callable | Task:
    """``invoke.task`` with ``ReprokitTask`` and no automatic short flags."""
    kwargs.setdefault("klass", ReprokitTask)
    kwargs.setdefault("auto_shortflags", False)
    return invoke.task(*args, **kwargs)


def settings(c: invoke.Context) -> dict[str, Any]:
    """The reprokit section of the merged Invoke config (defaults < system < user < project < env < runtime)."""
    section = c.config.get("reprokit") or {}
    return {key: section.get(key, default) for key, default in CONFIG_DEFAULTS.items()}


def is_dry(c: invoke.Context) -> bool:
    """``invoke --dry`` (anywhere on the line): show the plan, touch nothing."""
    return bool(c.config.run.dry)


def guard_output(fn: Callable[[], int]) -> int:
    """Run ``fn``; a reader that went away (``--json | head``) ends the command quietly with 141 (128 + SIGPIPE)."""
    try:
        code = fn()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        pass
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
    # Python would report the pipe again when it flushes stdout at exit: point stdout at /dev/null first.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    raise Exit(code=ExitCode.READER_GONE)


def group(name: str, heading: str, *tasks: Task) -> Collection:
    """One group of tasks (a module of ``reprokit.commands``) as its own collection; ``heading`` titles it in
    ``--list``. A group runs alone too (``program.TaskProgram(namespace=group)``): it has the config defaults."""
    for each in tasks:
        each.group_heading = f"{name}: {heading}"  # type: ignore[attr-defined]
    ns = Collection(name, *tasks)
    ns.__doc__ = heading
    ns.configure({"reprokit": dict(CONFIG_DEFAULTS)})
    return ns


def root(*groups: Collection) -> Collection:
    """The namespace of ``invoke`` and ``reprokit``: every group's tasks flat (a task's name is its command), with
    reprokit's config defaults (so env variables can override them)."""
    ns = Collection()
    for each in groups:
        for name, one in each.tasks.items():
            if name in ns.tasks:
                raise ValueError(f"task {name!r} of group {each.name!r} is in another group already")
            ns.add_task(one, name=name)
    ns.configure({"reprokit": dict(CONFIG_DEFAULTS)})
    return ns


def error_line(exc: ReprokitError) -> str:
    """The final ``error: ...`` of a task: its message may quote a host (sbatch's stderr, a path it listed), so every
    control byte is shown as its escape; reprokit's own line breaks stay."""
    return f"error: {shown(as_typed(str(exc)), multiline=True)}"


def call(front_end: Callable[..., int], *args: Any, **kwargs: Any) -> None:
    """Run a front end of ``reprokit.commands``: its ``ExitCode`` becomes the task's exit, a ``ReprokitError`` a
    one-line ``error: ...`` with its code, a reader gone away 141."""
    def run() -> int:
        try:
            return int(front_end(*args, **kwargs))
        except ReprokitError as exc:
            raise Exit(error_line(exc), code=int(exc.exit_code)) from None

    code = guard_output(run)
    if code:
        raise Exit(code=code)


def no_dry(c: invoke.Context, name: str) -> None:
    """A task that changes a host or a file has no plan to print: under --dry it does nothing, and says so."""
    if is_dry(c):
        raise Exit(f"error: `{console.program_name()} {name}` has no --dry plan; nothing was done (run it without --dry)", code=ExitCode.BAD_INPUT)


def paths(c: invoke.Context, **given: Any) -> dict[str, Any]:
    """The config's paths, with those flags that were given on the command line winning."""
    merged = settings(c)
    merged.update({key: value for key, value in given.items() if value is not None})
    from_flag = given.get("kits_dir") is not None
    merged["kits_dir"] = layers.kit_path(None, merged["kits_dir"], "-K" if from_flag else "config")
    merged["runs_dir"] = str(merged["runs_dir"] or layers.default_runs_dir())
    inventory = given.get("inventory")
    if inventory is not None and not (Path(inventory).is_file() or Path(inventory).is_dir()):
        problem = "not found" if not Path(inventory).exists() else "not a regular file or directory (a FIFO?)"
        raise Exit(f"error: {inventory}: inventory {problem} (--inventory); give an existing inventory file", code=ExitCode.BAD_INPUT)
    return merged
