"""The programs that run reprokit's tasks: ``invoke`` in this repository and the ``reprokit`` console command.

Both read the command line with ``task_parser.TaskParser`` (core flags before positionals, a variadic last
positional), show a task's positional arguments in its help (pyinvoke/invoke issue 449) and ``--list`` the tasks
under their group's heading. They are subclasses of Invoke's ``Program``, through the methods Invoke documents for
overriding; nothing of Invoke is patched.

``reprokit`` is ``ReprokitProgram`` (``main``, pyproject.toml's [project.scripts]). ``invoke`` is Invoke's own
program object (``invoke.main.program``), and Invoke has no setting that names the class of that object (a
``Program`` subclass is meant for a separate binary, pyinvoke/invoke issue 276): ``tasks.py`` at the repository's top
calls ``adopt_invoke_program`` as Invoke loads it, which makes that object a ``TaskProgram`` before it parses the
task arguments, so ``invoke TASK`` and ``reprokit TASK`` parse alike.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import sys
from importlib import metadata, resources
from pathlib import Path

from invoke import Config, Exit, Program
from invoke.exceptions import ParseError
from invoke.parser import Parser
from invoke.util import helpline

from reprokit import __version__
from reprokit.cli import completion
from reprokit.cli.task_parser import TaskParser, task_contexts
from reprokit.cli.tasks import ns
from reprokit.commands import console
from reprokit.commands.tasking import guard_output
from reprokit.config import layers
from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode


class TaskProgram(Program):
    """Invoke's ``Program`` with reprokit's parser, per-task help and task list; ``invoke`` in this repository."""

    @property
    def binary(self) -> str:
        """The name the user typed (``reprokit``, ``invoke``, ``inv``), which help and messages repeat: Invoke's own
        program calls itself ``inv[oke]``."""
        called = self.called_as
        if called and not called.endswith(".py"):
            return called
        return (self._binary or "reprokit").replace("[", "").replace("]", "")  # `python -m invoke`: inv[oke] -> invoke

    def run(self, argv: list[str] | str | None = None, exit: bool = True) -> None:
        try:
            super().run(argv, exit)
        finally:  # the name typed is this run's: a later run in the same process (a test) starts from `invoke`
            console.set_program_name("invoke")

    def _make_parser(self) -> Parser:
        return TaskParser(initial=self.initial_context,
                          contexts=task_contexts(self.collection, self.config.tasks.ignore_unknown_help))

    def parse_tasks(self) -> None:
        """Invoke's task parsing; a usage error (an unknown flag or task, a missing argument) is one line naming the
        command and its usage, exit 2 (Invoke says exit 1, which is a kit's FAIL)."""
        console.set_program_name(self.binary)
        try:
            super().parse_tasks()
        except ParseError as exc:
            raise Exit(self.usage_error(exc), code=int(ExitCode.BAD_INPUT)) from None

    def parse_cleanup(self) -> None:
        try:
            super().parse_cleanup()
        except ParseError as exc:  # `--help NAME` of no task
            raise Exit(self.usage_error(exc), code=int(ExitCode.BAD_INPUT)) from None

    def usage_error(self, exc: ParseError) -> str:
        """Invoke's parse error as ``error: ...`` in words that name the command typed, then that task's usage."""
        context = getattr(exc, "context", None)
        name = getattr(context, "name", None)
        contexts = getattr(self, "parser", None) and self.parser.contexts
        if not contexts or name not in contexts:
            name = None
        return f"error: {usage_problem(str(exc), self.binary, name)}\n{self.usage_line(name)}"

    def usage_line(self, name: str | None) -> str:
        if name is None:
            return f"Usage: {self.binary} TASK [--options] [ARGUMENTS ...]   (`{self.binary} --list` lists the tasks)"
        context = self.parser.contexts[name]
        positional = " ".join(arg.name.replace("_", "-").upper() + (" ..." if arg.kind is list else "")
                              for arg in context.positional_args)
        options = "[--options]" if context.help_tuples() else ""
        return " ".join(part for part in ("Usage:", self.binary, name, options, positional) if part)

    def print_task_help(self, name: str) -> None:
        """Invoke's per-task help, with the positional arguments in the usage line (pyinvoke/invoke issue 449); a
        reader that goes away (`| head`) ends it quietly."""
        guard_output(lambda: self._write_task_help(name) or 0)

    def _write_task_help(self, name: str) -> None:
        tuples = self.parser.contexts[name].help_tuples()
        print(self.usage_line(name))
        print("")
        print("Docstring:")
        for line in (inspect.getdoc(self.collection[name]) or "none").splitlines():
            print(self.leading_indent + console.as_typed(line) if line.strip() else "")
        print("")
        print("Options:")
        if tuples:
            self.print_columns([(names, console.as_typed(text or "")) for names, text in tuples])
        else:
            print(self.leading_indent + "none")
            print("")

    def list_flat(self) -> None:
        """``--list``: the tasks under their group's heading, in the root's order of groups; names as they are typed.
        The developers' tasks (``tasking.for_developers``) are left out, and named once at the end."""
        coll = self.scoped_collection
        groups: dict[str | None, list[tuple[str, str | None]]] = {}
        hidden = []
        for name, each in coll.tasks.items():
            if getattr(each, "for_developers", False):
                hidden.append(name)
                continue
            groups.setdefault(getattr(each, "group_heading", None), []).append((name, console.as_typed(helpline(each) or "")))
        if None in groups or coll.collections or self.list_root:
            super().list_flat()
            return
        width = max(len(name) for name in coll.tasks)  # one column for every group
        print(f"{self.task_list_opener()}:\n")
        for heading, pairs in groups.items():
            print(heading)
            self.print_columns([(name.ljust(width), line) for name, line in sorted(pairs)])
        if hidden:
            print(f"For developers of reprokit (docs/development.md): {', '.join(sorted(hidden))}")
            print("")


_NO_IDEA = re.compile(r"No idea what '(?P<token>.*)' is!")
_MISSING = re.compile(r"'(?P<task>[^']+)' did not receive required positional arguments: (?P<names>.*)")
_NEEDS = re.compile(r"'(?P<task>[^']+)' needs (?P<rest>.*)")
_NO_VALUE = re.compile(r"Flag '(?P<flag>[^']+)' needed value and was not given one!")


def usage_problem(text: str, binary: str, task: str | None) -> str:
    """One of Invoke's parse errors in words for people, naming the command as typed (``reprokit repro``)."""
    command = f"`{binary} {task}`" if task else f"`{binary}`"
    if found := _NO_IDEA.fullmatch(text):
        token = found["token"]
        if token.startswith("-"):
            return f"{command} has no option {token}; `{binary} {task or ''} --help`".replace("  ", " ") + " lists them"
        return f"no task or argument '{token}' for {command}; `{binary} --list` lists the tasks"
    if found := _MISSING.fullmatch(text):
        names = ", ".join(name.strip("'").replace("_", "-").upper() for name in found["names"].split(", "))
        return f"`{binary} {found['task']}` needs {names}"
    if found := _NEEDS.fullmatch(text):
        return f"`{binary} {found['task']}` needs {found['rest']}"
    if found := _NO_VALUE.fullmatch(text):
        return f"{command}: {found['flag']} needs a value"
    return f"{command}: {text}"


def adopt_invoke_program() -> None:
    """Make the running ``invoke`` command's program a ``TaskProgram`` (see the module's docstring); a no-op where
    that object is already one, or is not Invoke's stock ``Program`` (another tool built on Invoke)."""
    from invoke.main import program  # noqa: PLC0415 - Invoke's binary; made on import, as `invoke` itself does

    if type(program) is Program:
        program.__class__ = TaskProgram


class ReprokitConfig(Config):
    """Config files named reprokit.yaml (./reprokit.yaml, ~/.reprokit.yaml, /etc/reprokit.yaml), env REPROKIT_*."""

    prefix = "reprokit"


class ReprokitProgram(TaskProgram):
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
            sys.exit(ExitCode.READER_GONE)

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
        print(f"Documentation (docs/... in messages): {layers.builtin_root() / 'docs'}")

    def parse_core_args(self) -> None:
        """``--print-completion-script zsh``: reprokit's own script (Invoke's completes nothing without compinit)."""
        super().parse_core_args()
        if self.args["print-completion-script"].value == "zsh":
            print(zsh_completion_script(self.binary_names))
            raise Exit

    def print_version(self) -> None:
        """``reprokit --version``: its version, the ansible-core it drives, and the pins of the built-in kits."""
        print(version_text())

    def parse_cleanup(self) -> None:
        """``--complete``: kits, hosts and groups where the command line wants one (``reprokit.cli.completion``); the rest
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
    if remainder[-1:].isspace():  # the word being completed is empty (zsh's script passes it): `-H local <TAB>`
        tokens.append("")
    return tokens[1:] if tokens and Path(tokens[0]).name in names else tokens


def zsh_completion_script(names: list[str]) -> str:
    template = resources.files("reprokit").joinpath("data/completion/zsh.completion").read_text()
    return template.replace("@BINARY@", names[0]).replace("@NAMES@", " ".join(names))


def version_text() -> str:
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
    program = ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", version=__version__,
                              config_class=ReprokitConfig)
    program.run(argv)
