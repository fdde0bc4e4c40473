"""Progress of long steps: the workloads' ``progress: TASK k/n`` lines, a line per tenth with an ETA in logs.

The compile test runs the real nvcc (/usr/local/bin/nvcc) through the static analysis' own Compiler.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from reprokit.output.progress import CountProgress
from reprokit.workloads.contract import COUNT_PROGRESS_RE


class Clock:
    def __init__(self, step_s: float):
        self.now, self.step_s = 0.0, step_s

    def __call__(self) -> float:
        self.now += self.step_s
        return self.now


def log_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_a_log_gets_a_line_per_tenth_with_an_eta():
    console, out = log_console()
    counts = CountProgress(console, clock=Clock(2.0))
    for done in range(1, 34):
        assert counts.feed(f"progress: static-smem compile {done}/33: unit{done} compiled in 2 s") is True
    lines = out.getvalue().splitlines()
    assert len(lines) == 11
    assert lines[0] == "      static-smem compile 1/33 (3%)"  # no pace yet
    assert lines[1] == "      static-smem compile 4/33 (12%), ETA 58 s"
    assert lines[-1] == "      static-smem compile 33/33 (100%) in 64 s"


def test_other_lines_are_left_to_the_caller_and_a_new_step_starts_afresh():
    console, out = log_console()
    counts = CountProgress(console, clock=Clock(1.0))
    assert counts.feed("static-smem: building the tactics probe") is False
    assert counts.feed("progress: sweep triton problems 1/2: ep8-gemm1-t1") is True
    counts.stop()
    assert counts.feed("progress: sweep triton problems 1/2: ep8-gemm1-t1") is True
    assert out.getvalue().splitlines() == ["      sweep triton problems 1/2 (50%)"] * 2


def test_the_format_is_one_owners():
    match = COUNT_PROGRESS_RE.match("progress: sweep flashinfer problems 3/20: next ep8-gemm1-t64")
    assert (match["task"], match["done"], match["total"], match["detail"]) == ("sweep flashinfer problems", "3", "20",
                                                                               "next ep8-gemm1-t64")


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/bin/nvcc").exists(), reason="nvcc is not installed")
def test_real_compiles_report_units_done_of_total(tmp_path, capfd):
    from reprokit.workloads.static_smem.nvcc import Compile, Compiler, find_nvcc

    nvcc = find_nvcc()
    jobs = []
    for index in range(3):
        source = tmp_path / f"unit{index}.cu"
        source.write_text(f"__global__ void k{index}(int *p) {{ p[0] = {index}; }}\n")
        jobs.append(Compile(name=f"unit{index}", args=["-c", str(source), "-arch=sm_90"], output=tmp_path / f"unit{index}.o",
                            log=tmp_path / f"unit{index}.log", inputs_text=source.read_text()))
    Compiler(nvcc, tmp_path / "cache", jobs=2).run_all(jobs)
    Compiler(nvcc, tmp_path / "cache", jobs=2).run_all(jobs)  # again: every unit from the object cache
    lines = [line for line in capfd.readouterr().err.splitlines() if COUNT_PROGRESS_RE.match(line)]
    assert sorted(int(COUNT_PROGRESS_RE.match(line)["done"]) for line in lines) == [1, 1, 2, 2, 3, 3]
    assert sum(line.endswith(" cached") for line in lines) == 3
    console, out = log_console()
    counts = CountProgress(console)
    assert all(counts.feed(line) for line in lines[:3])
    assert out.getvalue().splitlines()[-1].startswith("      static-smem compile 3/3 (100%) in ")


def test_host_numbers_past_the_bound_are_plain_lines_not_counts():
    """Issue #40: a 5000-digit total raised ValueError in the reader and ended the step."""
    console, out = log_console()
    counts = CountProgress(console)
    assert counts.feed("progress: x 1/" + "9" * 5000) is False
    assert counts.feed("progress: x 1/" + "9" * 13) is False
    assert counts.feed("progress: x 1/" + "9" * 12) is True
    assert counts.tasks["x"].total == 999_999_999_999


def test_a_400_digit_total_on_a_terminal_never_reaches_the_bar():
    """Issue #40: rich's Progress.stop raised OverflowError on a 400-digit total; the run ended with no verdict."""
    out = io.StringIO()
    counts = CountProgress(Console(file=out, force_terminal=True, width=80))
    assert counts.feed("progress: huge 1/" + "7" * 400) is False
    assert counts.feed("progress: fine 1/10") is True
    counts.stop()
    assert "fine" in out.getvalue()


def test_twenty_thousand_task_names_draw_eight_bars():
    """Issue #40: 20 000 distinct task names redrew 20 000 bars (still printing after 300 s)."""
    counts = CountProgress(Console(file=io.StringIO(), force_terminal=True, width=80))
    taken = sum(counts.feed(f"progress: task{n} 1/2") for n in range(20_000))
    assert taken == 8 and len(counts.bars.tasks) == 8
    counts.stop()


def test_a_printer_that_raises_is_logged_and_the_run_goes_on(caplog):
    from reprokit.commands.console import never_fatal

    def broken(text: str) -> None:
        raise OverflowError("cannot convert float infinity to integer")

    never_fatal(broken)("progress: x 1/2")
    assert [r.message for r in caplog.records] == ["printing a line failed; the run goes on"]
    assert caplog.records[0].exc_info[0] is OverflowError
