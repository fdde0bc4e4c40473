"""The root namespace: every group of ``reprokit.commands`` (one Invoke ``Collection`` each), its tasks flat.

``tasks.py`` at the repository root imports ``ns`` from here for ``invoke TASK``; the ``reprokit`` console command
(``reprokit.cli.program.main``) runs the same collection from any directory. The groups' order is ``invoke --list``'s.
"""

from __future__ import annotations

from reprokit.commands import ci, fix, info, kits, operate, records, run, setup, smem
from reprokit.commands.tasking import root

ns = root(run.ns, operate.ns, kits.ns, info.ns, records.ns, smem.ns, fix.ns, setup.ns, ci.ns)
