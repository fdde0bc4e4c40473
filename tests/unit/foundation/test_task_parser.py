"""reprokit's parser against the pinned Invoke: the bugs it works around are still Invoke's (so the day an upgrade
fixes them, this says the subclass can go), the subclass reads them right, and the `invoke` binary's program becomes
a TaskProgram only when this repository's tasks.py is loaded."""

from __future__ import annotations

import re
import subprocess
import sys

import invoke
import pytest
from invoke.exceptions import ParseError
from invoke.parser import Argument, Parser, ParserContext

from reprokit.cli.program import ReprokitConfig, ReprokitProgram, TaskProgram
from reprokit.cli.task_parser import TaskContext, TaskParseMachine, TaskParser
from reprokit.cli.tasks import ns
from tests.conftest import REPO


def pinned_invoke() -> str:
    return re.search(r"^invoke==(\S+)", (REPO / "requirements.lock").read_text(), re.M).group(1)


def contexts() -> tuple[ParserContext, list[ParserContext]]:
    """Invoke's core flags that matter here, a task with one positional and a task with a variadic one."""
    initial = ParserContext(args=[Argument(names=("help", "h"), optional=True),
                                  Argument(names=("dry",), kind=bool, default=False)])
    build = ParserContext(name="build", args=[Argument(names=("target",), positional=True)])
    triage = ParserContext(name="triage", args=[Argument(names=("paths",), kind=list, positional=True, default=[]),
                                                Argument(names=("json",), kind=bool, default=False)])
    return initial, [build, triage]


def parsed(parser_class: type[Parser], *argv: str) -> dict[str, dict]:
    initial, tasks = contexts()
    result = parser_class(initial=initial, contexts=tasks).parse_argv(list(argv))
    return {context.name or "core": {name: arg.value for name, arg in context.args.items()} for context in result}


def test_the_venv_runs_the_pinned_invoke():
    assert invoke.__version__ == pinned_invoke() == "2.2.1"


def test_the_pinned_invoke_still_eats_a_core_flag_as_a_missing_positional():
    """pyinvoke/invoke issues 982 (`--help`) and 1084 (every other core flag)."""
    assert parsed(Parser, "build", "--help")["build"] == {"target": "--help"}
    with pytest.raises(ParseError, match="No idea what 'x' is!"):
        parsed(Parser, "build", "--dry", "x")
    with pytest.raises(ParseError, match="No idea what 'a.log' is!"):  # a list positional takes not even one value
        parsed(Parser, "triage", "a.log", "b.log")


def test_core_flags_are_core_flags_before_a_missing_positional():
    assert parsed(TaskParser, "build", "--help") == {"core": {"help": "build", "dry": False}}  # help, and nothing runs
    assert parsed(TaskParser, "build", "-h")["core"]["help"] == "build"
    assert parsed(TaskParser, "build", "--dry", "x") == {"core": {"help": None, "dry": True}, "build": {"target": "x"}}


def test_the_last_positional_of_a_list_takes_every_value_up_to_a_flag_or_a_task():
    assert parsed(TaskParser, "triage", "a.log", "b.log", "--json", "c.log")["triage"] == {
        "paths": ["a.log", "b.log", "c.log"], "json": True}
    assert parsed(TaskParser, "triage", "a.log", "build", "x") == {
        "core": {"help": None, "dry": False}, "triage": {"paths": ["a.log"], "json": False}, "build": {"target": "x"}}
    with pytest.raises(ParseError) as err:
        parsed(TaskParser, "triage", "--json")
    assert str(err.value) == "'triage' needs at least one PATHS"
    assert parsed(TaskParser, "triage", "--help")["core"]["help"] == "triage"  # help needs no path


def test_the_parser_is_invokes_own_with_only_the_machine_changed():
    """Invoke's ``parse_argv`` names the machine's class as a global: ``TaskParser`` runs that code, not a copy."""
    assert "ParseMachine" in Parser.parse_argv.__code__.co_names
    assert TaskParser.parse_argv.__code__ is Parser.parse_argv.__code__
    assert TaskParser.parse_argv.__globals__["ParseMachine"] is TaskParseMachine
    initial, tasks = contexts()
    machine = TaskParseMachine(initial=initial, contexts={}, ignore_unknown=False)  # the parent's states, shared
    assert machine.current_state == "context" and set(machine._states) == {"context", "unknown", "end"}


def test_a_repeatable_flag_shows_that_it_takes_a_value():
    context = TaskContext(name="repro", args=ns["repro"].get_arguments())
    assert context.help_for("--only")[0] == "-o STRING, --only=STRING"
    assert ParserContext(name="repro", args=ns["repro"].get_arguments()).help_for("--only")[0] == "-o, --only"  # Invoke's
    assert context.help_for("--host")[0] == "-H STRING, --host=STRING"


def test_the_invoke_binary_becomes_a_task_program_only_through_this_tasks_py():
    code = ("import invoke.main as m, runpy; before = type(m.program).__name__; runpy.run_path('tasks.py');"
            " print(before, type(m.program).__name__, type(m.program).__mro__[1].__name__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["Program", "TaskProgram", "Program"]
    assert issubclass(ReprokitProgram, TaskProgram)


def run(capsys, program: invoke.Program, *argv: str) -> tuple[int, str, str]:
    try:
        program.run([program.binary, *argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def reprokit_program() -> ReprokitProgram:
    return ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", version="0", config_class=ReprokitConfig)


def test_reprokit_help_lists_the_groups_then_the_core_options_it_shows(capsys):
    code, out, err = run(capsys, reprokit_program(), "--help")
    lines = out.splitlines()
    assert (code, err) == (0, "")
    assert lines[:3] == ["Usage: reprokit [--dry] TASK [--options] [ARGUMENTS ...]   (reprokit TASK --help explains one)",
                         "", "Subcommands:"]
    assert lines[4] == "run: kit runs on hosts"
    assert "Options before the task:" in lines and "--pty" not in out  # Invoke's shell options stay hidden
    assert lines[-2].startswith('Shell completion (tasks, kits, hosts): eval "$(reprokit --print-completion-script bash)"')
    assert lines[-1] == f"Documentation (docs/... in messages): {REPO / 'docs'}"  # the checkout's; an installed copy's own


def test_completion_offers_the_kits_after_repro_and_the_tasks_at_the_start(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    code, out, _ = run(capsys, reprokit_program(), "--complete", "--", "reprokit", "repro", "")
    assert code == 0 and {p.stem for p in (REPO / "kits").glob("*.yml")} <= set(out.split())
    code, out, _ = run(capsys, reprokit_program(), "--complete", "--", "reprokit", "rep")
    assert code == 0 and out.split() == sorted(ns.task_names)  # the shell keeps those that start with the word
