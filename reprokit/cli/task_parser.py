"""How reprokit's programs read a task's arguments: Invoke 2's parser, extended where it reads them wrong.

Invoke 2.2 (Fabric 3.2 keeps Invoke below 3) eats a core flag as the value of a task's missing positional argument:
``invoke repro --help`` ran the kit ``--help`` and ``invoke triage --dry x.log`` triaged ``--dry``
(pyinvoke/invoke issues 982 and 1084; the fixes proposed upstream, pull requests 1078 and 1085, are in no released
Invoke 2). And a positional argument takes one value, where ``invoke triage logs/*.log`` hands the task every file
the shell expanded. ``TaskParseMachine`` reads a core flag as a core flag first, and lets a task's last positional,
when it is a list, take every value up to the next flag or task name.

Invoke offers no setting for the parse machine: ``Parser.parse_argv`` builds a ``ParseMachine`` by its module's name.
``TaskParser`` is ``Parser`` with that one name bound to ``TaskParseMachine`` (Invoke's own ``parse_argv``, not a
copy; ``tests/unit/foundation/test_task_parser.py`` checks the pinned Invoke still builds its machine that way).
``TaskContext`` is the ``ParserContext`` extension of a task's help (a repeatable flag takes a value).
"""

from __future__ import annotations

import types
from typing import Any

from invoke.exceptions import ParseError
from invoke.parser import Argument, Parser, ParserContext
from invoke.parser import parser as invoke_parser


def variadic_arg(context: ParserContext) -> Argument | None:
    """The task's last positional argument when it takes many values (a list), else None."""
    positional = context.positional_args
    if positional and positional[-1].kind is list:
        return positional[-1]
    return None


class TaskParseMachine(invoke_parser.ParseMachine):
    """Invoke's parse machine with core flags read before positionals and a variadic last positional."""

    def handle(self, token: str) -> None:
        context = self.context
        free = self.current_state != "unknown" and context is not None and not self.waiting_for_flag_value
        if free and token not in context.flags and token not in context.inverse_flags:
            if self.initial and token in self.initial.flags:
                flag = self.initial.flags[token]
                if flag.name == "help":
                    flag.value = context.name
                else:
                    self.switch_to_flag(token)
                return
            variadic = variadic_arg(context)
            if variadic is not None and not token.startswith("-") and token not in self.contexts:
                variadic.value = token  # a list argument appends
                return
        super().handle(token)

    def complete_context(self) -> None:
        context = self.context
        if context is not None and self.initial is not None and self.initial.flags["--help"].value:
            return  # help was asked for: missing positionals do not matter
        variadic = variadic_arg(context) if context is not None else None
        if variadic is not None and not variadic.value:
            raise ParseError(
                f"'{context.name}' needs at least one {variadic.name.replace('_', '-').upper()}",
                context)
        super().complete_context()


# fluidity's metaclass gives each class only the states declared in its own body: a subclass shares its parent's.
TaskParseMachine._class_states = invoke_parser.ParseMachine._class_states  # type: ignore[attr-defined]
TaskParseMachine._class_transitions = invoke_parser.ParseMachine._class_transitions  # type: ignore[attr-defined]


class TaskParser(Parser):
    """``Parser`` whose ``parse_argv`` drives a ``TaskParseMachine``."""

    parse_argv = types.FunctionType(Parser.parse_argv.__code__, {**vars(invoke_parser), "ParseMachine": TaskParseMachine},
                                    "parse_argv", Parser.parse_argv.__defaults__, Parser.parse_argv.__closure__)


class TaskContext(ParserContext):
    """A task's parser context whose help shows that a repeatable (list) flag takes a value, each time: Invoke shows it
    as if it were a switch."""

    def help_for(self, flag: str) -> tuple[str, str]:
        names, help_text = super().help_for(flag)
        if self.flags[flag].kind is list:
            spelled = [f"{n} STRING" if len(n.strip("-")) == 1 else f"{n}=STRING" for n in self.names_for(flag)]
            names = ", ".join(sorted(spelled, key=len))
        return names, help_text


def task_contexts(collection: Any, ignore_unknown_help: bool | None) -> list[TaskContext]:
    """``Collection.to_contexts``, each a ``TaskContext``."""
    return [TaskContext(name=name, aliases=aliases, args=collection[name].get_arguments(ignore_unknown_help=ignore_unknown_help))
            for name, aliases in collection.task_names.items()]
