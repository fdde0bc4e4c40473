"""`invoke kits` (and `kits --check`), `new-kit`, `check-pins`: the kits, held to their rules, and a new one begun.

What a kit is checked against is ``reprokit.kits.kit_check``'s, ``reprokit.upstream.args``' and ``reprokit.kits.pins``'; a
kit's skeleton is ``reprokit.kits.new_kit``'s. Here they are printed and the exit code is decided.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from reprokit.commands import tasking
from reprokit.commands.console import console, program_name
from reprokit.commands.flags import JSON_HELP, KITS_DIR_HELP
from reprokit.commands.tasking import task
from reprokit.config.kit import kit_names, load_kit, load_kit_file
from reprokit.config.layers import KitPath, kit_path
from reprokit.errors import ExitCode
from reprokit.kits import catalogue, kit_check
from reprokit.kits.new_kit import new_kit
from reprokit.kits.pins import check_kit
from reprokit.step_kinds import STEP_KINDS


def step_kinds_table() -> list[tuple[str, str, str, str]]:
    """Each step kind as ``invoke kits`` shows it: name, where it runs, whether it is implemented, what it does."""
    return [(k.name, k.where, "yes" if k.implemented else "not yet", k.summary) for k in STEP_KINDS.values()]


def list_kits(kits_dir: KitPath | str | None, as_json: bool = False, everything: bool = False) -> int:
    """Every kit of every layer, the winning one of each name, and the layer it came from (``source``); each layer's
    folder once under the table. ``everything``: the step kinds and the catalogue of cases too."""
    found = kit_path(kits_dir).kits()
    loaded = [(load_kit_file(path), path, source) for path, source in found.values()]
    if as_json:
        print(json.dumps({"kits": [{"kit": k.kit, "source": source, "path": str(path),
                                    "steps": [{"name": s.name, "uses": s.uses} for s in k.steps],
                                    "pins": dict(k.pins)} for k, path, source in loaded],
                          "step_kinds": [dict(zip(("kind", "runs_on", "implemented", "summary"), row))
                                         for row in step_kinds_table()]}, indent=2))
        return ExitCode.PASS
    table = Table(title="kits", title_justify="left")
    for column in ("kit", "source", "steps", "pins"):
        table.add_column(column, overflow="fold", no_wrap=column == "source")
    for kit, _path, source in loaded:
        table.add_row(kit.kit, source, ", ".join(f"{s.name}" for s in kit.steps),
                      ", ".join(f"{k} {v}" for k, v in kit.pins.items()))
    console.print(table)
    for source, folder in dict.fromkeys((source, path.parent) for _, path, source in loaded):
        console.print(f"{source}: {folder}", markup=False, soft_wrap=True)
    if not everything:
        console.print(f"`{program_name()} kits --all` also lists the step kinds and the cases", markup=False)
        return ExitCode.PASS
    steps = Table(title="step kinds", title_justify="left")
    for column in ("kind", "runs on", "implemented", "what it does"):
        steps.add_column(column, overflow="fold")
    for row in step_kinds_table():
        steps.add_row(*row)
    console.print(steps)
    cases = Table(title="cases (docs/cases.md)", title_justify="left")
    for column in ("kit", "thread", "reported", "predicted", "releases", "fix or workaround"):
        cases.add_column(column, overflow="fold")
    for case in catalogue.cases(kits_dir):
        cases.add_row(case.kit, ", ".join(case.threads), case.reported, case.predicted, case.releases, case.fix)
    console.print(cases)
    return ExitCode.PASS


def write_cases(kits_dir: str, target: str) -> int:
    """``invoke kits --cases FILE``: the catalogue page (reprokit/kits/catalogue.py), written atomically."""
    path = Path(target)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(catalogue.markdown(catalogue.cases(kits_dir)), encoding="utf-8")
    tmp.replace(path)
    print(f"{path}: written ({len(catalogue.cases(kits_dir))} kits)")
    return ExitCode.PASS


def check_kits(kits_dir: KitPath | str) -> int:
    """``invoke kits --check``: each kit's structure, and its sglang flags against its pinned release; 1 on a problem."""
    failed = 0
    for name in kit_names(kits_dir):
        kit, path = load_kit(name, kits_dir)
        structural, account = kit_check.structure(kit, path)
        for problem in structural:
            print(problem)
        problems, checked = kit_check.flag_problems(kit)
        for problem in problems:
            print(f"{path}: {problem}; change the kit's `with:` to a flag that release has")
        if checked and not problems:
            print(f"{path}: {'vLLM' if 'vllm' in kit.pins else 'sglang'} flags agree with the pinned release ({'; '.join(checked)})")
        if not structural and not problems:
            print(f"{path}: {account}")
        failed += bool(problems or structural)
    return ExitCode.FAIL if failed else ExitCode.PASS


def check_pins(kits_dir: KitPath | str, kit_name: str | None, as_json: bool = False) -> int:
    """Each kit's pins against the pinned wheels' metadata; 1 when a pinned package requires another version."""
    names = [kit_name] if kit_name else kit_names(kits_dir)
    failed = 0
    report = []
    for name in names:
        kit, path = load_kit(name, kits_dir)
        problems, metadata = check_kit(kit)
        checked = ", ".join(f"{m['name']} {m['version']}" for m in metadata.values())
        report.append({"kit": kit.kit, "path": str(path), "checked": [f"{m['name']} {m['version']}" for m in metadata.values()],
                       "problems": [str(problem) for problem in problems]})
        if problems:
            failed += 1
        if as_json:
            continue
        for problem in problems:
            print(f"{path}: pins: {problem}; change the pin to match")
        if not problems:
            print(f"{path}: pins agree with the wheels' metadata ({checked})")
    if as_json:
        print(json.dumps(report, indent=2))
    return ExitCode.FAIL if failed else ExitCode.PASS


LAYER_NAMES = {"-K": "the --kits-dir kits", "config": "the config's kits_dir", "project": "the project's kits",
               "user": "the user's kits"}  # where new-kit wrote, in its line


def write_new_kit(name: str, kind: str | None, kits_dir: KitPath | str, pins: list[str], as_json: bool = False,
                  issue: str | None = None) -> int:
    """Write the skeleton to the top layer (``-K``, else the project's ``kits``, else the user's) and say which."""
    kits = kit_path(kits_dir)
    shadowed = kits.kits().get(name)  # a kit of that name in a lower layer, which the new one replaces
    path = new_kit(name, kind, kits, pins, issue)
    kind = kind or load_kit_file(path).steps[0].uses
    if as_json:
        print(json.dumps({"kit": name, "path": str(path), "kind": kind, "source": kits.top_source}))
        return ExitCode.PASS
    replaces = f"; it replaces the {shadowed[1]} kit {shadowed[0]}" if shadowed else ""
    print(f"{path}: written to {LAYER_NAMES.get(kits.top_source, kits.top_source)} (step kind {kind}{replaces}); next:"
          f" fill in description and expectations, then `reprokit kits --check` and `reprokit --dry repro {name}` (docs/adding-a-case.md)")
    return ExitCode.PASS


@task(name="kits", help={"kits-dir": KITS_DIR_HELP, **JSON_HELP,
                         "check": "check every sglang server and bench_serving flag the kits pass against the pinned"
                                  " release's own server_args.py / bench_serving.py (read from its wheel); exit 1 on"
                                  " any it would refuse",
                         "cases": "write the catalogue of cases (docs/cases.md) to this file",
                         "all": "also list the step kinds and the catalogue of cases"})
def kits_task(c, kits_dir=None, json=False, check=False, cases=None, all=False):  # noqa: A002 - the flag's name
    """List the kits (--all: and the step kinds and cases); --check their sglang flags against the pinned wheel."""
    kits = tasking.paths(c, kits_dir=kits_dir)["kits_dir"]
    if cases:
        tasking.call(write_cases, kits, cases)
    elif check:
        tasking.call(check_kits, kits)
    else:
        tasking.call(list_kits, kits, as_json=json, everything=all)


@task(name="new-kit", positional=["name"], iterable=["pin"],
      help={"name": "the new kit's name (lower case, digits, '-'); written to <kits-dir>/<name>.yml",
            "kind": "the step kind of its first step (`invoke kits` lists them; default: the issue's guess, else triton-smem)",
            "pin": "NAME=VERSION of a pin the kind needs (repeatable; default: the version the other kits pin)",
            "from-issue": "a saved upstream issue (a file, or a URL): its arch, kernel, figures, versions and thread go"
                          " into the skeleton, and its guess of the kind when --kind is not given",
            "kits-dir": "directory to write the kit to (default: the project's ./kits, outside a project the user's"
                        " $XDG_CONFIG_HOME/reprokit/kits)", **JSON_HELP})
def new_kit_task(c, name, kind=None, pin=None, kits_dir=None, json=False, from_issue=None):
    """Write the skeleton of a new kit from a step kind's declaration (it loads as written; never overwrites)."""
    tasking.no_dry(c, "new-kit")
    tasking.call(write_new_kit, name, kind, tasking.paths(c, kits_dir=kits_dir)["kits_dir"], list(pin or []), as_json=json,
                 issue=from_issue)


@task(name="check-pins", help={"kit": "kit to check (default: all kits)", "kits-dir": KITS_DIR_HELP, **JSON_HELP})
def check_pins_task(c, kit=None, kits_dir=None, json=False):
    """Check a kit's pins against the pinned wheels' own metadata (reads the metadata from PyPI)."""
    tasking.call(check_pins, tasking.paths(c, kits_dir=kits_dir)["kits_dir"], kit, as_json=json)


ns = tasking.group("kits", "the kits, checked, and a new one begun", kits_task, new_kit_task, check_pins_task)
