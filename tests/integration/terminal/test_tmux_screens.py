"""What a person sees in a real terminal: the ``reprokit`` command run in tmux panes 80 and 120 columns wide, the
screens read back with ``tmux capture-pane`` and compared.

Three first-contact scenes: the triage of the EP8 fixture log, a GPU-less repro on this machine, and a failed SSH
connection (a port where something that is not an SSH server answers). Each must show no broken table row (a row is
one line of the screen, or a box row closed on its own line), no traceback, and a next step. tmux (Debian's) is a
real terminal: rich reads the pane's width as it would a user's.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")

EP8_LOG = REPO / "tests" / "fixtures" / "logs" / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz"
REPROKIT = str(Path(sys.prefix) / "bin" / "reprokit")
WIDTHS = (80, 120)
COLOR_SGR = re.compile(r"\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;[0-9;]+)m")  # a foreground colour, not bold or italic
# a row of the failures' table: op, tactic, tile, swap_ab, count, ranks, example line (then, where wide, the fusion)
FAILURE_ROW = r"gemm2 +1[45] +\d+x\d+x\d+ +false +16 +16 unattributed +line \d+"
NARROW_ROW = re.compile(rf"^{FAILURE_ROW} *$")
WIDE_ROW = re.compile(rf"^{FAILURE_ROW} +FINALIZE +2026-02-19 ")


def screen(command: str, width: int, cwd: Path, env: dict[str, str] | None = None, escapes: bool = False,
           wait_s: float = 240) -> tuple[int, list[str], str]:
    """Run ``command`` in a fresh tmux server's pane ``width`` columns wide: its exit code, every line of the screen
    (as drawn, folded by the terminal) and the text with the terminal's folds undone (``capture-pane -J``)."""
    socket_name = f"reprokit-test-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket_name, "-f", "/dev/null"]
    wrapped = f"cd {shlex.quote(str(cwd))} && {command}; echo \"[exit=$?]\"; sleep 600"
    environment = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    environment.pop("COLUMNS", None)
    environment.pop("LINES", None)
    subprocess.run([*tmux, "new-session", "-d", "-x", str(width), "-y", "50", "-s", "scene", "sh", "-c", wrapped],
                   check=True, env=environment, timeout=30)
    try:
        subprocess.run([*tmux, "set-option", "-g", "history-limit", "50000"], check=True, timeout=30)
        deadline = time.monotonic() + wait_s
        while True:
            text = subprocess.run([*tmux, "capture-pane", "-p", "-S", "-", "-E", "-", "-t", "scene", *(["-e"] if escapes else [])],
                                  check=True, capture_output=True, text=True, timeout=30).stdout
            found = re.search(r"\[exit=(\d+)\]", text)
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert found, f"the command did not end in {wait_s} s:\n{text}"
        lines = text[:found.start()].rstrip("\n").split("\n")
        joined = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "scene"], check=True,
                                capture_output=True, text=True, timeout=30).stdout
        return int(found.group(1)), lines, joined[:joined.index("[exit=")]
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=30)


def visible(line: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line)


def assert_no_broken_box_rows(lines: list[str], width: int) -> None:
    """Every line of a boxed table starts and ends with its border, and none is wider than the terminal."""
    for line in lines:
        shown = visible(line).rstrip()
        assert len(shown) <= width, shown
        if shown[:1] in "┏┃┡│└":
            assert shown[-1:] in "┓┃┩│┘", f"a table row broken at {width} columns: {shown!r}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_triage_of_the_ep8_log_fits_the_terminal_one_row_a_tactic_with_the_next_step(tmp_path, width):
    code, lines, joined = screen(f"{REPROKIT} triage {shlex.quote(str(EP8_LOG))}", width, tmp_path)
    assert code == 10  # READY_WITH_NONFATAL_AUTOTUNE_FAILURES
    text = "\n".join(lines)
    assert "Traceback" not in text
    rows = [line.rstrip() for line in lines if line.startswith("gemm")]
    assert len(rows) == 2 and all((NARROW_ROW if width == 80 else WIDE_ROW).match(row) for row in rows), rows
    assert all(len(line) <= width for line in lines)
    assert joined.count("Failed to initialize cutlass TMA WS") == 1  # said once, under the table
    assert "\nerror of every row: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal\n" in joined
    assert "\nstatic:  the static analysis of the same release agrees on all 2 tactic(s)" in joined  # the headline says the two agree
    assert "\nnext:    `reprokit fix --flashinfer 0.6.3 --arch sm120` keeps these tactics from being tried" in joined


def test_the_triage_screens_at_80_and_120_columns_show_the_same_rows(tmp_path):
    screens = {width: screen(f"{REPROKIT} triage {shlex.quote(str(EP8_LOG))}", width, tmp_path)[1] for width in WIDTHS}
    fields = {width: [line.split()[:6] for line in lines if line.startswith("gemm")] for width, lines in screens.items()}
    assert fields[80] == fields[120] and len(fields[80]) == 2
    # the same rows; at 120 columns the optional columns that fit (fusion, first time) follow the example line
    assert [row.rstrip() for row in screens[80] if row.startswith("gemm")] == [
        WIDE_ROW.match(row).group(0).rsplit(None, 2)[0] for row in screens[120] if row.startswith("gemm")]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_gpu_less_repro_says_cant_tell_here_with_the_count_and_the_next_step(tmp_path, width):
    runs = tmp_path / "runs"
    code, lines, joined = screen(f"{REPROKIT} repro smem-probe --runs-dir {shlex.quote(str(runs))}", width, tmp_path)
    assert code == 3
    text = "\n".join(lines)
    assert "Traceback" not in text and "see above" not in text
    assert_no_broken_box_rows(lines, width)
    assert "can't tell here: 0 of 4 expectations held, 4 could not be judged here (INCONCLUSIVE, exit 3)" in joined
    (run_dir,) = (d for d in runs.iterdir() if not d.name.startswith("."))  # .locks: the records' lock files
    short = run_dir.name.rsplit("-", 1)[-1]
    assert (f"next: run it where the kit's GPU is: `reprokit repro smem-probe -H HOST` (`reprokit hosts` lists the"
            f" inventory); `reprokit summary -r {short}` shows this run's findings") in joined
    assert joined.count("no NVIDIA driver") == 2  # under the fingerprint, and the note: not three times


def test_no_color_and_the_color_switch_are_honoured_in_the_terminal(tmp_path):
    command = f"{REPROKIT} repro smem-probe --runs-dir {shlex.quote(str(tmp_path / 'runs'))} --quiet"
    _, coloured, _ = screen(command, 120, tmp_path, escapes=True)
    _, no_color, _ = screen(command, 120, tmp_path, env={"NO_COLOR": "1"}, escapes=True)
    _, switched, _ = screen(command + " --color never", 120, tmp_path, escapes=True)
    assert any(COLOR_SGR.search(line) for line in coloured)  # the verdict's yellow
    assert not any(COLOR_SGR.search(line) for line in no_color)
    assert not any(COLOR_SGR.search(line) for line in switched)
    piped = subprocess.run([REPROKIT, "hosts", "--color", "always"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and "\x1b[" in piped.stdout  # colour into a pipe, when asked for


def serve_not_ssh(server: socket.socket, stop: threading.Event) -> None:
    """Something that answers on a port but is not an SSH server: an HTTP reply, then the connection closed."""
    server.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        with conn:
            conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_failed_ssh_connection_is_one_line_with_a_hint_and_no_traceback(tmp_path, width):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    stop = threading.Event()
    thread = threading.Thread(target=serve_not_ssh, args=(server, stop), daemon=True)
    thread.start()
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(f"all:\n  hosts:\n    gone:\n      ansible_host: 127.0.0.1\n      ansible_port: {port}\n"
                         "      gpu_arch: sm120\n      gpu_count: 1\n      runtime: native\n")
    try:
        code, lines, joined = screen(f"{REPROKIT} repro smem-probe -H gone -i {inventory} --runs-dir runs --known-hosts known",
                             width, tmp_path)
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()
    assert code == 4  # HOST_ERROR
    text = "\n".join(lines)
    assert "Traceback" not in text and "paramiko" not in text and "Exception" not in text
    assert joined.rstrip().endswith(f"error: host 'gone' (127.0.0.1:{port}): cannot connect (something answered, but not an SSH"
                           f" server); check the port (ansible_port) in the inventory; try `ssh -p {port} 127.0.0.1`")
    assert len(joined.rstrip().splitlines()) == 3  # the two retries' notes and the error
    assert not (tmp_path / "runs").exists()
