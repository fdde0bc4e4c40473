"""The tasks come in groups, one Invoke Collection per module of reprokit/commands/, and the root holds them flat:
every documented command keeps its name (`invoke repro`, not `invoke run.repro`), `invoke --list` shows the groups."""

from __future__ import annotations

import json
import re

import pytest

from reprokit.cli.program import TaskProgram
from reprokit.cli.tasks import ns
from reprokit.commands import ci, fix, info, kits, operate, records, run, setup, smem
from tests.conftest import REPO, run_invoke

GROUPS = [run.ns, operate.ns, kits.ns, info.ns, records.ns, smem.ns, fix.ns, setup.ns, ci.ns]  # the root's order
TASKS = {
    "run": ["collect", "probe", "repro", "sweep", "unlock"],
    "operate": ["cancel", "logs", "status"],
    "kits": ["check-pins", "kits", "new-kit"],
    "info": ["hosts", "triage"],
    "records": ["check-record", "compare", "runs", "summary"],
    "smem": ["bisect", "fit-table", "smem"],
    "fix": ["fix", "report"],
    "setup": ["build", "lint", "lock", "provision"],
    "ci": ["changed-kits", "ci-verdict"],
}
DEVELOPERS = {"lint", "lock", "changed-kits", "ci-verdict"}  # run as any task; left out of the users' list
LOG = REPO / "tests" / "fixtures" / "logs" / "sglang-ep8-warmup-fatal.log"


def test_each_group_is_a_collection_and_the_root_holds_their_tasks_flat() -> None:
    assert {group.name: sorted(group.task_names) for group in GROUPS} == TASKS
    assert sorted(ns.task_names) == sorted(name for names in TASKS.values() for name in names)  # each once
    assert ns.collections == {}  # no `invoke run.repro`
    for group in GROUPS:
        for name in group.task_names:
            assert ns[name] is group[name]
            assert ns[name].group_heading.startswith(f"{group.name}: ")


def test_every_documented_command_is_a_task() -> None:
    documented = set()
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        documented |= set(re.findall(r"`(?:\./dev )?invoke ([a-z][a-z-]*)(?=[\s`])", page.read_text(encoding="utf-8")))
    assert len(documented) == 28 and documented <= set(ns.task_names)


def test_the_list_shows_each_group_under_its_heading() -> None:
    listed = run_invoke("--list")
    assert (listed.returncode, listed.stderr) == (0, "")
    lines = listed.stdout.splitlines()
    assert lines[:2] == ["Available tasks:", ""]
    headings = [line for line in lines if line and not line.startswith(" ")]
    assert headings[1:-1] == [f"{group.name}: {group.__doc__}" for group in GROUPS if group is not ci.ns]
    shown: dict[str, list[str]] = {}
    for line in lines[2:-2]:
        if line and not line.startswith(" "):
            current = shown.setdefault(line.split(":")[0], [])
        elif line.startswith("  ") and not line.startswith("   "):
            current.append(line.split()[0])
    assert shown == {group: [t for t in names if t not in DEVELOPERS] for group, names in TASKS.items() if group != "ci"}
    assert lines[-2:] == ["For developers of reprokit (docs/development.md): changed-kits, ci-verdict, lint, lock", ""]
    columns = {line.index(line.split()[1]) for line in lines if line.startswith("  ") and not line.startswith("   ")}
    assert columns == {17}  # one column for the descriptions, across the groups


def test_a_dotted_group_name_is_not_a_command() -> None:
    proc = run_invoke("run.repro", "smem-probe")
    assert (proc.returncode, proc.stderr.splitlines()[0]) == (
        2, "error: no task or argument 'run.repro' for `invoke`; `invoke --list` lists the tasks")


def test_the_json_list_names_every_task_flat() -> None:
    proc = run_invoke("--list", "--list-format=json")
    listed = json.loads(proc.stdout)
    assert sorted(t["name"] for t in listed["tasks"]) == sorted(ns.task_names) and listed["collections"] == []


def test_a_group_runs_alone_with_the_parser_and_the_config(capsys) -> None:
    program = TaskProgram(namespace=info.ns, name="invoke", binary="invoke")
    with pytest.raises(SystemExit) as done:
        program.run(["invoke", "triage", "--json", str(LOG)])
    report = json.loads(capsys.readouterr().out)
    assert done.value.code == report["exit_code"] == 11  # the log is fatal
    program.run(["invoke", "hosts", "--json"])  # exit 0; the inventory from the config defaults: inventory.yml
    assert json.loads(capsys.readouterr().out)["inventory"] == "inventory.yml"
