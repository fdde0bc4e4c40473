"""Log triage: was the server up, which autotune tactics failed on which tiles, what was fatal.

Public API (what ``tasks.py`` and the kit step ``triage`` call)::

    report = triage_files([Path("server.log")], flashinfer_version="0.6.3")
    report.to_json()["verdict"]    # 'READY_WITH_NONFATAL_AUTOTUNE_FAILURES'
    report.exit_code               # 10, see EXIT_CODES
    print(render_table(report))

Modules: ``formats`` and ``patterns`` (every recognised string, with a real example; record
types in ``table_types``), ``reader`` (bytes to lines), ``parser`` (lines to events), ``versions``
(what the log says about the stack), ``exception_text``, ``tactics`` (per-release tables),
``summary``, ``verdict``, ``api``, ``render``, ``corpus`` (real logs and their expected readings), ``reconcile``
(the failed tactics beside the static prediction of the same release); ``patterns_stacks`` (TGI, Triton's model
table, the stacks recognised but not read).
"""

from reprokit.triage.api import TriageReport, current_phase, triage_files
from reprokit.triage.render import render_explain, render_table
from reprokit.triage.verdict import EXIT_CODES, LogVerdict

__all__ = ["EXIT_CODES", "LogVerdict", "TriageReport", "current_phase", "render_explain", "render_table", "triage_files"]
