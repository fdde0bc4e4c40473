"""The session launcher is the one module that knows how a detached session is started, watched and ended."""

from __future__ import annotations

import re
from pathlib import Path

import reprokit

PACKAGE = Path(reprokit.__file__).resolve().parent
SESSION_LAUNCHER = PACKAGE / "hosts" / "launchers" / "session.py"
SESSION_WORDS = re.compile(r"\b(setsid|pgrep|pkill|124|137)\b")  # the session's tools, GNU timeout's exit codes


def test_no_module_but_the_session_launcher_names_its_tools_or_timeouts_exit_codes():
    found = [f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py")) if path != SESSION_LAUNCHER
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if SESSION_WORDS.search(line)]
    assert found == []
    assert len(SESSION_WORDS.findall(SESSION_LAUNCHER.read_text(encoding="utf-8"))) >= 6  # the guard reads the right file
