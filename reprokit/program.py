"""reprokit's Invoke wiring: the parser fixes, the task class, the groups of tasks, the config and the ``reprokit`` command.

Invoke 2's parser (Fabric 3.2 keeps Invoke below 3) eats a core flag as the value of a task's missing positional
argument: ``invoke repro --help`` ran the kit ``--help`` and ``invoke triage --dry x.log`` triaged ``--dry``
(pyinvoke/invoke issues 982 and 1084). ``install_parser`` patches Invoke's parse machine to read a core flag as a
core flag first, and to let a task's last positional take any number of values (``invoke triage logs/*.log`` after
the shell expanded the glob). ``group`` calls it as each module of ``reprokit.commands`` builds its collection, on
import, which Invoke does before it parses the task arguments, so the ``invoke`` command and the ``reprokit`` command
parse alike. The fix follows the upstream
proposals (pyinvoke/invoke pull requests 1078 and 1085), which no released Invoke 2 carries.

The tasks come in groups, one Invoke ``Collection`` per module of ``reprokit.commands`` (``group``). The root
namespace (``root``) holds every group's tasks flat, so the documented names stay (``invoke repro``, not
``invoke run.repro``); ``invoke --list`` shows them under their group's heading.
"""

from __future__ import annotations

import errno
import inspect
import os
import shlex
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import invoke
from invoke import Collection, Config, Exit, Program
from invoke.parser import Argument, ParserContext
from invoke.parser import parser as invoke_parser
from invoke.tasks import Task
from invoke.util import helpline

from reprokit import __version__, completion, verbosity
from reprokit.config import layers
from reprokit.errors import ReprokitError
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS

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


_ORIGINAL_HANDLE = invoke_parser.ParseMachine.handle
_ORIGINAL_COMPLETE_CONTEXT = invoke_parser.ParseMachine.complete_context


def _handle(machine: Any, token: str) -> None:
    """Invoke's ``ParseMachine.handle``, with core flags read before positionals and a variadic last positional."""
    context = machine.context
    free = machine.current_state != "unknown" and context is not None and not machine.waiting_for_flag_value
    if free and token not in context.flags and token not in context.inverse_flags:
        if machine.initial and token in machine.initial.flags:
            flag = machine.initial.flags[token]
            if flag.name == "help":
                flag.value = context.name
            else:
                machine.switch_to_flag(token)
            return
        variadic = _variadic_arg(context)
        if variadic is not None and not token.startswith("-") and token not in machine.contexts:
            variadic.value = token  # a list argument appends
            return
    _ORIGINAL_HANDLE(machine, token)


def _complete_context(machine: Any) -> None:
    context = machine.context
    if context is not None and machine.initial is not None and machine.initial.flags["--help"].value:
        return  # help was asked for: missing positionals do not matter
    variadic = _variadic_arg(context) if context is not None else None
    if variadic is not None and not variadic.value:
        raise invoke_parser.ParseError(
            f"'{context.name}' needs at least one {variadic.name.replace('_', '-')}; see `invoke {context.name} --help`",
            context)
    _ORIGINAL_COMPLETE_CONTEXT(machine)


def _variadic_arg(context: Any) -> Any:
    positional = context.positional_args
    if positional and positional[-1].kind is list:
        return positional[-1]
    return None


_ORIGINAL_HELP_FOR = ParserContext.help_for


def _help_for(context: ParserContext, flag: str) -> tuple[str, str]:
    """Invoke shows a repeatable (list) flag as if it were a switch: show that it takes a value, each time."""
    names, help_text = _ORIGINAL_HELP_FOR(context, flag)
    if context.flags[flag].kind is list:
        spelled = [f"{n} STRING" if len(n.strip("-")) == 1 else f"{n}=STRING" for n in context.names_for(flag)]
        names = ", ".join(sorted(spelled, key=len))
    return names, help_text


def _print_task_help(program: Program, name: str) -> None:
    """Invoke's per-task help, with the positional arguments in the usage line (pyinvoke/invoke issue 449); a reader
    that goes away (`| head`) ends it quietly."""
    guard_output(lambda: _write_task_help(program, name) or 0)


def _write_task_help(program: Program, name: str) -> None:
    context = program.parser.contexts[name]
    tuples = context.help_tuples()
    positional = " ".join(arg.name.replace("_", "-").upper() + (" ..." if arg.kind is list else "")
                          for arg in context.positional_args)
    print(f"Usage: {program.binary} [--core-opts] {name} {'[--options] ' if tuples else ''}"
          f"{positional + ' ' if positional else ''}[other tasks here ...]")
    print("")
    print("Docstring:")
    for line in (inspect.getdoc(program.collection[name]) or "none").splitlines():
        print(program.leading_indent + line if line.strip() else "")
    print("")
    print("Options:")
    if tuples:
        program.print_columns(tuples)
    else:
        print(program.leading_indent + "none")
        print("")


_ORIGINAL_LIST_FLAT = Program.list_flat


def _list_flat(program: Program) -> None:
    """``--list``: the tasks under their group's heading, in the root's order of groups; names as they are typed."""
    coll = program.scoped_collection
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for name, each in coll.tasks.items():
        groups.setdefault(getattr(each, "group_heading", None), []).append((name, helpline(each)))
    if None in groups or coll.collections or program.list_root:
        _ORIGINAL_LIST_FLAT(program)
        return
    width = max(len(name) for name in coll.tasks)  # one column for every group
    print(f"{program.task_list_opener()}:\n")
    for heading, pairs in groups.items():
        print(heading)
        program.print_columns([(name.ljust(width), line) for name, line in sorted(pairs)])


def install_parser() -> None:
    """Patch Invoke's parse machine (a fluidity state machine, which cannot be subclassed), its help for repeatable
    flags and its task list; idempotent."""
    invoke_parser.ParseMachine.handle = _handle  # type: ignore[method-assign]
    invoke_parser.ParseMachine.complete_context = _complete_context  # type: ignore[method-assign]
    ParserContext.help_for = _help_for  # type: ignore[method-assign]
    Program.print_task_help = _print_task_help  # type: ignore[method-assign]
    Program.list_flat = _list_flat  # type: ignore[method-assign]


class ReprokitTask(Task):
    """A task whose flags take their short names from ``SHORT_FLAGS``; a positional listed as iterable takes many values;
    every task takes ``--quiet`` and ``--verbose``, which mean the same everywhere (``reprokit.verbosity``)."""

    def get_arguments(self, ignore_unknown_help: bool | None = None) -> list[Any]:
        # Invoke consumes the help dict while it builds the arguments: keep it for the next call (a second Program run).
        saved = dict(self.help)
        try:
            arguments = super().get_arguments(ignore_unknown_help)
        finally:
            self.help = saved
        declared = {argument.name for argument in arguments}
        return arguments + [Argument(names=(name, SHORT_FLAGS[name]), kind=bool, default=False,
                                     help=verbosity.HELP[name]) for name in verbosity.HELP if name not in declared]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        declared = inspect.signature(self.body).parameters
        flags = {name: bool(kwargs.get(name) if name in declared else kwargs.pop(name, False)) for name in verbosity.HELP}
        try:
            verbosity.set_from_flags(**flags)
        except ReprokitError as exc:
            raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None
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
    raise Exit(code=141)


class ReprokitConfig(Config):
    """Config files named reprokit.yaml (./reprokit.yaml, ~/.reprokit.yaml, /etc/reprokit.yaml), env REPROKIT_*."""

    prefix = "reprokit"


class ReprokitProgram(Program):
    """``reprokit TASK ...``: the same tasks as ``invoke TASK ...`` in this repository, from any directory."""

    def parse_collection(self) -> None:
        super().parse_collection()
        # A bundled namespace has no project directory of its own: the directory it runs in is the project.
        self.config.set_project_location(os.getcwd())
        self.config.load_project()

    def run(self, argv: list[str] | str | None = None, exit: bool = True) -> None:
        try:
            super().run(argv, exit)
        except BrokenPipeError:  # Invoke's own --help or --list into `head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)

    def _make_parser(self) -> invoke_parser.Parser:
        install_parser()
        return super()._make_parser()

    def print_help(self) -> None:
        """``reprokit --help``: the tasks by group, then the few of Invoke's core options that mean something here."""
        print(f"Usage: {self.binary} [--dry] TASK [--options] [ARGUMENTS ...]   ({self.binary} TASK --help explains one)")
        print("")
        self.list_tasks()
        print("Options before the task:")
        print("")
        self.print_columns([(self.initial_context.help_for(flag)[0], text) for flag, text in CORE_FLAGS_SHOWN.items()])
        print(f"Shell completion (tasks, kits, hosts): eval \"$({self.binary} --print-completion-script bash)\""
              " in ~/.bashrc (zsh: ... zsh, in ~/.zshrc)")

    def print_version(self) -> None:
        """``reprokit --version``: its version, the ansible-core it drives, and the pins of the built-in kits."""
        print(version_text())

    def parse_cleanup(self) -> None:
        """``--complete``: kits, hosts and groups where the command line wants one (``reprokit.completion``); the rest
        (task names, flags) as Invoke completes them."""
        if self.args.complete.value:
            found = completion.candidates(_completion_tokens(self.core.remainder, self.binary_names),
                                          list(self.collection.task_names),
                                          (self.config.get("reprokit") or {}).get("inventory") or "inventory.yml")
            if found is not None:
                print("\n".join(found))
                raise Exit
        super().parse_cleanup()


# Invoke's core options that `reprokit --help` shows; the others (pty, echo, hide, sudo, ...) run shell commands
# reprokit's tasks do not run through Invoke, and stay accepted only so that `invoke` and `reprokit` parse alike.
CORE_FLAGS_SHOWN = {
    "--help": "this help; with a task's name (or after it), that task's arguments",
    "--list": "the tasks by group",
    "--version": "reprokit's version, the ansible-core it drives, the pins of the built-in kits",
    "--dry": "show what a task would do (a run's plan, provision's command), run nothing",
    "--print-completion-script": "the shell's completion script (bash, zsh, fish): tasks, flags, kits, hosts",
    "--complete": "the completion candidates for the words after `--` (what the completion script calls)",
}


def _completion_tokens(remainder: str, names: list[str]) -> list[str]:
    try:
        tokens = shlex.split(remainder)
    except ValueError:  # an open quote: complete as if at its start
        tokens = remainder.split()
    return tokens[1:] if tokens and Path(tokens[0]).name in names else tokens


def version_text() -> str:
    from reprokit.config.kit import load_kit_file  # noqa: PLC0415 - the kit models import the step kinds

    try:
        ansible = f"ansible-core {metadata.version('ansible-core')}"
    except metadata.PackageNotFoundError:
        ansible = "ansible-core not installed"
    builtin = layers.builtin_root() / "kits"
    lines = [f"reprokit {__version__} ({ansible}; Python {sys.version.split()[0]})", f"built-in kits ({builtin}):"]
    kits = layers.kit_path(builtin).kits()
    width = max((len(name) for name in kits), default=0)
    for name, (path, _) in kits.items():
        pins = ", ".join(f"{k} {v}" for k, v in load_kit_file(path).pins.items())
        lines.append(f"  {name.ljust(width)}  {pins or '(no pins)'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """The ``reprokit`` console entry point (pyproject.toml: [project.scripts])."""
    from reprokit.tasks import ns  # noqa: PLC0415 - the tasks import the whole control plane

    program = ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", version=__version__,
                              config_class=ReprokitConfig)
    program.run(argv)


def group(name: str, heading: str, *tasks: Task) -> Collection:
    """One group of tasks (a module of ``reprokit.commands``) as its own collection; ``heading`` titles it in
    ``--list``. A group runs alone too (``Program(namespace=group)``): it has the parser and the config defaults."""
    install_parser()
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


def call(front_end: Callable[..., int], *args: Any, **kwargs: Any) -> None:
    """Run a front end of ``reprokit.commands``: its ``ExitCode`` becomes the task's exit, a ``ReprokitError`` a
    one-line ``error: ...`` with its code, a reader gone away 141."""
    def run() -> int:
        try:
            return int(front_end(*args, **kwargs))
        except ReprokitError as exc:
            raise Exit(f"error: {exc}", code=int(exc.exit_code)) from None

    code = guard_output(run)
    if code:
        raise Exit(code=code)


def no_dry(c: invoke.Context, name: str) -> None:
    """A task that changes a host or a file has no plan to print: under --dry it does nothing, and says so."""
    if is_dry(c):
        raise Exit(f"error: `invoke {name}` has no --dry plan; nothing was done (run it without --dry)", code=2)


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
        raise Exit(f"error: {inventory}: inventory {problem} (--inventory); give an existing inventory file", code=2)
    return merged
