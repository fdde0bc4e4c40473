"""A host cannot speak for reprokit: its bytes replayed into a real terminal (tmux) are shown, never obeyed.

The hostile step prints what a host could use to fake the operator's screen: an OSC title, a clear screen, an
OSC 8 hyperlink, a carriage return that redraws the line as a fake PASS, a right-to-left override in a file name,
and rich markup in a progress line. `invoke repro --verbose` runs it from inside a tmux pane; the pane's title
and its captured text (``capture-pane``) say what the terminal did.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest
from tests.conftest import REPO, run_invoke
from tests.integration.hostile.conftest import HOST, RESULT_OK

HOSTILE = (
    r"printf 'T\033]0;PWNED-TITLE\007|C\033[2J\033[H|L\033]8;;http://evil.example/\033\\click\033]8;;\033\\|\n';"
    r" printf 'x\rPASS: all expectations held\n'; printf 'progress: [bold red]red[/] 1/2\n';"
    r" printf 'name\342\200\256txt.exe\n'; echo rlo > $(printf 'report\342\200\256lmth.exe'); " + RESULT_OK
)
SOCKET = "reprokit-hostile-test"

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


def test_host_output_is_shown_escaped_in_a_real_terminal(rig, tmp_path):
    rig.inventory(HOSTILE)
    done = tmp_path / "done"
    command = (f"cd {REPO} && export COLUMNS=200 && echo MARKER-BEFORE && {sys.executable} -m invoke --search-root {REPO} repro smem-probe"
               f" --host {HOST} --inventory {tmp_path / 'inv.yml'} --known-hosts {rig.known} --runs-dir {rig.runs}"
               f" --verbose; echo $? > {done}; sleep 600")
    _tmux("new-session", "-d", "-s", "hostile", "-x", "220", "-y", "60", command)
    try:
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(0.5)
        screen = _tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "hostile")
        title = _tmux("display-message", "-p", "-t", "hostile", "#{pane_title}").strip()
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], check=False)
    assert done.read_text().strip() == str(int(ExitCode.FAIL)), screen  # the probe saw no GPU: the kit FAILs
    assert title != "PWNED-TITLE"
    assert "MARKER-BEFORE" in screen  # the screen was not cleared
    assert r"T\x1b]0;PWNED-TITLE\x07|C\x1b[2J\x1b[H|L\x1b]8;;http://evil.example/\x1b\click\x1b]8;;\x1b\|" in screen
    assert r"| x\x0dPASS: all expectations held" in screen  # the carriage return redraws nothing
    assert not any(line.startswith("PASS: all expectations") for line in screen.splitlines())
    assert r"progress: [bold red]red[/] 1/2" in screen  # markup is text (the verbose line behind the bar)
    assert r"name\u202etxt.exe" in screen
    (run_dir,) = [p for p in rig.runs.iterdir() if not p.name.startswith(".")]
    assert load_manifest(run_dir).status == "complete"
    # the record keeps the host's bytes; the reports show the name's override as text
    assert "report\u202elmth.exe" in {p.name for p in (run_dir / "steps" / "probe").iterdir()}
    html = (run_dir / "report.html").read_text()
    assert "\u202e" not in html and "\x1b" not in html and r"report\u202elmth.exe" in html
    assert "\x1b" not in (run_dir / "report.md").read_text()


def test_a_result_s_error_reaches_the_verdict_s_note_line_escaped(rig, tmp_path):
    """Issue #40: the verdict's `note N:` line printed a result.json `error` raw (in repro and collect)."""
    body = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "error", "devices": [],'
            ' "error": "driver said \\\\u001b]0;pwned\\\\u0007 no"}\' > result.json; exit 1')
    rig.inventory(body)
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), timeout=120)
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    words = " ".join(proc.stdout.split())  # the note is folded at the pipe's 80 columns
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note ")]
    assert len(notes) == 1, proc.stdout
    assert "note 1: step 'probe' (error): 4 expectations depend on it: driver said \\x1b]0;pwned\\x07 no" in words, proc.stdout


def test_an_interrupted_run_s_verdict_line_says_why(rig, tmp_path):
    """Issue #40: `INTERRUPTED:` was printed with an empty reason."""
    rig.inventory(f'echo started > {rig.work}/started; sleep 60; ' + RESULT_OK)
    proc = subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--host",
                             HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts", str(rig.known),
                             "--runs-dir", str(rig.runs)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while not (rig.work / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(2)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    verdicts = [line for line in out.splitlines() if "INTERRUPTED" in line]  # the headline: words, then the contract
    assert verdicts == ["interrupted: stopped by Ctrl-C or SIGTERM; the running workload was ended (INTERRUPTED, exit 130)"]
