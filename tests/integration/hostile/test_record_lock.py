"""The record lock itself: refused in one line when held, released with its holder, held by a run while it runs."""

from __future__ import annotations

from reprokit.commands.run import run_exit_code
from reprokit.errors import ExitCode
from reprokit.records.writer_lock import RecordBusy, record_lock
from tests.integration.hostile.conftest import RESULT_OK


def test_a_record_held_by_another_writer_is_refused_in_one_line(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    said: list[str] = []
    with record_lock(run_dir):
        try:
            with record_lock(run_dir, said.append, wait_s=0.5):
                raise AssertionError("two writers held one record")
        except RecordBusy as exc:
            assert str(exc) == (f"{run_dir}: another reprokit process (a collect, or the run itself) is writing this"
                                " record; wait for it to end and run again")
    assert said == ["waiting for the other reprokit process writing run to finish ..."]
    with record_lock(run_dir, wait_s=0):  # released with its holder
        pass


def test_the_run_itself_holds_its_record(rig):
    outcome, _, _ = rig.run(RESULT_OK)
    assert run_exit_code(outcome) == ExitCode.FAIL
    with record_lock(outcome.run_dir, wait_s=0):  # the run ended: its lock went with it
        pass
