"""Every read of a pull-back is bounded: bytes past a file's size or past an answer, a trickle, a flood of files.

The host's reader is the host's own program: here its Python is a test double that runs the real reader and then
misbehaves, for the probe step's directory only (the fingerprint comes back as usual). Each run is given a
bounded time in a thread: the old pull-back read such a host for ever.
"""

from __future__ import annotations

import threading

from reprokit.commands.run import run_exit_code
from reprokit.errors import ExitCode
from reprokit.hosts import pullback
from tests.integration.hostile.conftest import RESULT_OK

BIG = "head -c 400000 /dev/urandom > big.bin; "  # over SMALL_FILE_BYTES: streamed (read-stream), through the OpenSSH client


def hostile_reader(rig, case: str) -> None:
    """Put ``case`` (a sh case arm for the reader's arguments) in front of the fake Python's other arms."""
    script = rig.work / "fake-python"
    text = script.read_text()
    script.write_text(text.replace('case "$*" in\n', 'case "$*" in\n' + case + "\n", 1))


def bounded_run(rig, body: str, case: str, limit_s: float = 90, **options):
    rig.inventory(body)
    hostile_reader(rig, case)
    box: dict = {}

    def target():
        from reprokit.config.kit import load_kit_file
        from reprokit.hosts.axes import load_inventory
        from reprokit.records.run_dir import load_manifest
        from reprokit.run.kit_run import run_kit
        from tests.integration.hostile.conftest import HOST, KIT
        inv = load_inventory(rig.tmp_path / "inv.yml")
        outcome = run_kit(load_kit_file(KIT), KIT, inv.host(HOST), rig.runs, KIT.parent, say=rig.messages.append,
                          inventory=inv, options=rig.options(**options))
        box["outcome"], box["manifest"] = outcome, load_manifest(outcome.run_dir).to_json()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"the pull-back still runs after {limit_s} s"
    return box["outcome"], box["manifest"]


def test_bytes_past_a_files_size_end_the_pull_back(rig):
    # the reader announces big.bin, then sends more than its listed size where the file's trailer belongs
    case = '''  *"- read-stream "*"/probe "*) printf '{"i": 0}\\n'; head -c 500000 /dev/urandom ;;'''
    outcome, manifest = bounded_run(rig, BIG + RESULT_OK, case)
    assert run_exit_code(outcome) == ExitCode.HOST_ERROR
    assert manifest["status"] == "incomplete"
    assert manifest["status_detail"] == ("host 'h2': big.bin: the host sent more than the 400000 bytes it listed (protocol"
                                         " violation); the pull-back from this host stops, the files stay on the host")
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "big.bin").stat().st_size == 400000  # the host keeps its copy
    assert not (outcome.run_dir / "steps" / "probe" / "big.bin").exists()


def test_bytes_after_a_batch_answer_end_the_pull_back(rig):
    case = '  *"- read-many "*"/probe "*) python3 "$@"; yes garbage ;;'
    outcome, manifest = bounded_run(rig, RESULT_OK, case)
    assert manifest["status"] == "incomplete"
    assert manifest["status_detail"] == ("host 'h2': the reader sent bytes after its answer for 3 files (protocol"
                                         " violation); the pull-back from this host stops, the files stay on the host")
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "result.json").exists()


def test_a_trickling_host_meets_the_pull_backs_deadline(rig, monkeypatch):
    monkeypatch.setattr(pullback, "DEADLINE_FLOOR_S", 4.0)
    # one byte a second: never silent long enough for the idle timeout, never done
    case = '  *"- read-many "*"/probe "*) while true; do printf x; sleep 1; done ;;'
    outcome, manifest = bounded_run(rig, RESULT_OK, case, limit_s=60)
    assert manifest["status"] == "incomplete"
    assert manifest["status_detail"] == ("host 'h2': the host's reader (read-many) passed its deadline (its bytes at 2 MiB/s"
                                         " plus 4 s); the files stay on the host")


def test_a_flood_of_files_meets_the_runs_file_cap(rig):
    body = "mkdir flood; for i in $(seq 1 150); do : > flood/f$i; done; " + RESULT_OK
    outcome, manifest = bounded_run(rig, body, "", max_pull_files=100)
    assert manifest["status"] == "incomplete"
    assert manifest["status_detail"].startswith("host 'h2': ")
    assert manifest["status_detail"].endswith(" lists more than 97 entries; with the 3 already pulled that passes this"
                                              " run's cap of 100 files (config reprokit.max_pull_files); the files stay"
                                              " on the host")
    assert not (outcome.run_dir / "steps" / "probe" / "flood").exists()
    (remote_run,) = rig.remote_runs()
    assert len(list((remote_run / "probe" / "flood").iterdir())) == 150
