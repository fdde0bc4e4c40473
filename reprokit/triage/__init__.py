"""Log triage: was the server up, which autotune tactics failed on which tiles, what was fatal.

Public API (what ``tasks.py`` and the kit step ``triage`` call)::

    report = triage_files([Path("server.log")], flashinfer_version="0.6.3")
    report.to_json()["verdict"]    # 'READY_WITH_NONFATAL_AUTOTUNE_FAILURES'
    report.exit_code               # 10, see EXIT_CODES
    print(render_table(report))

Modules: ``formats`` (every recognised string, with a real example), ``reader`` (bytes to
lines), ``parser`` (lines to events), ``exception_text``, ``tactics``, ``summary``,
``verdict``, ``api``, ``render``.
"""

from reprokit.triage.api import TriageReport, current_phase, triage_files
from reprokit.triage.render import render_table
from reprokit.triage.verdict import EXIT_CODES, Verdict

__all__ = ["EXIT_CODES", "TriageReport", "Verdict", "current_phase", "render_table", "triage_files"]
