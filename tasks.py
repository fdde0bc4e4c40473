"""Invoke entry point of this repository: the tasks live in ``reprokit/commands/``, one group per module, assembled in
``reprokit/cli/tasks.py`` (so that the ``reprokit`` console command installed by ``pipx install .`` has the same ones).
`invoke --list` lists them by group; `invoke TASK --help` explains one.

    invoke repro ep8-crash [--host NAME | --group NAME]   run a kit, write runs/<id>/, judge it, report
    invoke --dry repro ep8-crash                          show the plan (steps, where, images, transfers), run nothing
"""

from reprokit.cli.program import adopt_invoke_program
from reprokit.cli.tasks import ns  # noqa: F401 - Invoke loads the collection named `ns`

adopt_invoke_program()  # `invoke` parses the task arguments as `reprokit` does (reprokit/cli/program.py says why)
