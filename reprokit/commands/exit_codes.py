"""Every exit code reprokit has, as one page: the commands' (``errors.ExitCode``), ``invoke triage``'s (one per log
verdict) and the workloads' (``workloads/facts/exits.py``, with the step status each one records).

``docs/exit-codes.md`` holds ``page_block()`` between its markers; ``tests/unit/foundation/test_exit_codes.py``
fails when the page and the code disagree, so a code is changed in its enum and the page regenerated
(``python -m reprokit.commands.exit_codes``), never edited by hand. A front end's module: it names the codes.
"""

from __future__ import annotations

from reprokit.errors import ExitCode
from reprokit.triage.verdict import EXIT_CODES as TRIAGE_EXIT_CODES
from reprokit.workloads.facts.exits import STATUS_OF_EXIT, Exit

BEGIN = "<!-- exit codes: rendered by reprokit/commands/exit_codes.py; do not edit by hand -->"
END = "<!-- end of exit codes -->"


def exit_code_tables() -> str:
    """The three tables, in Markdown."""
    lines = ["### Commands (`invoke repro`, `collect`, `check-record`, ...)", "", "| code | name | meaning |", "|---|---|---|"]
    lines += [f"| {code.value} | `{code.name}` | {_cell(code.meaning)} |" for code in ExitCode]
    lines += ["", "### `invoke triage`: one per log verdict (`docs/triage.md`)", "", "| code | verdict |", "|---|---|"]
    lines += [f"| {code} | `{verdict.value}` |" for verdict, code in sorted(TRIAGE_EXIT_CODES.items(), key=lambda i: i[1])]
    lines += ["", "### Workloads (on the host; the runner records the step status)", "",
              "| code | name | step status | meaning |", "|---|---|---|---|"]
    lines += [f"| {code.value} | `{code.name}` | `{STATUS_OF_EXIT[code]}` | {_cell(code.meaning)} |" for code in Exit]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a pipe in a meaning (`... | head`) would end the table's cell


def page_block() -> str:
    return f"{BEGIN}\n{exit_code_tables()}\n{END}"


if __name__ == "__main__":
    print(page_block())
