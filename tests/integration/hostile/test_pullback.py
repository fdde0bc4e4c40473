"""Pull-back against a hostile step directory: forged names, links, FIFOs, swaps, growing and unreadable files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from reprokit.commands.run import run_exit_code
from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode
from reprokit.hosts.factory import executor_for
from reprokit.hosts.pullback import local_target, parse_listing
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.report.markdown import NOT_PULLED_NOTE
from reprokit.run.kit_run import run_kit
from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, step
from tests.integration.remote.conftest import alive

FORGE = (
    # a directory whose name ends in "\n7 " made the old `find -printf '%s %P\n'` listing carry the absolute path
    # "/<...>/planted.txt"; the control machine then read that host path and wrote it to the same path here
    'mkdir -p "$(printf "d\\n7 ")/PLANT"; echo evil > "$(printf "d\\n7 ")/PLANT/planted.txt";'
    ' ln -s /etc/passwd passwd-link; mkfifo pipe; echo hidden > .dotfile;'
    ' echo odd > "$(printf "name-\\377")"; mkdir sub; echo deep > sub/file.txt; ' + RESULT_OK
)


def test_forged_names_links_and_fifos_never_leave_the_step_dir(rig, tmp_path):
    plant = tmp_path / "PLANT"
    outcome, manifest, _ = rig.run(FORGE.replace("PLANT", str(plant).lstrip("/")))
    out = outcome.run_dir / "steps" / "probe"
    assert manifest["status"] == "complete", rig.messages
    assert not plant.exists()  # nothing written where the forged name pointed
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        ".dotfile", "params.json", "result.json", "step.log", "sub/file.txt"]
    assert (out / ".dotfile").read_text() == "hidden\n"
    not_pulled = {e["path"]: e["reason"] for e in step(manifest)["not_pulled"]}
    assert not_pulled["passwd-link"] == "not a regular file (symlink)"
    assert not_pulled["pipe"] == "not a regular file (fifo)"
    assert not_pulled["name-\\udcff"] == "the name is not UTF-8"
    forged = [p for p in not_pulled if p.startswith("d\n7 ")]
    assert forged == [f"d\n7 /{str(plant).lstrip('/')}/planted.txt"]
    assert not_pulled[forged[0]] == "the name contains control characters (a newline?)"
    assert len(not_pulled) == 4
    assert verify_record(outcome.run_dir) == []
    assert "steps/probe/.dotfile" in manifest["artifacts"]
    # what could not come back stays on the host, with the rest of the run
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "pipe").exists() and (remote_run / "probe" / "result.json").exists()
    assert not (rig.work / "lock").exists()
    report_md = (outcome.run_dir / "report.md").read_text()
    report_html = (outcome.run_dir / "report.html").read_text()
    assert "| probe | passwd-link | not a regular file (symlink) |" in report_md
    assert "| probe | pipe | not a regular file (fifo) |" in report_md
    assert report_md.count("| probe | ") >= 4 and NOT_PULLED_NOTE in report_md
    assert "passwd-link" in report_html and "not a regular file (fifo)" in report_html
    assert "remove it on the host once you have looked" in report_html


def test_unreadable_file_is_reported_and_kept_on_the_host(rig):
    outcome, manifest, _ = rig.run('echo secret-data > locked.bin; chmod 000 locked.bin; ' + RESULT_OK)
    assert manifest["status"] == "complete"
    assert step(manifest)["status"] == "ok"
    (entry,) = step(manifest)["not_pulled"]
    assert entry == {"path": "locked.bin", "reason": "the host refused to read it: cannot open it without following a"
                                                     " link (Permission denied)"}
    assert not (outcome.run_dir / "steps" / "probe" / "locked.bin").exists()
    (remote_run,) = rig.remote_runs()
    assert (remote_run / "probe" / "locked.bin").exists()


def test_processes_a_step_leaves_behind_are_ended_and_a_growing_log_comes_back_whole(rig):
    body = ('(while true; do echo tick >> grow.log; sleep 0.01; done) > /dev/null 2>&1 < /dev/null &'
            f' echo $! > {rig.work}/leftover.pid; sleep 0.3; ' + RESULT_OK)
    outcome, manifest, _ = rig.run(body)
    assert manifest["status"] == "complete", rig.messages
    pid = int((rig.work / "leftover.pid").read_text())
    assert not alive(pid)  # its session was killed when the step ended
    grown = (outcome.run_dir / "steps" / "probe" / "grow.log").read_text()
    assert grown and set(grown.splitlines()) == {"tick"}
    assert verify_record(outcome.run_dir) == []
    assert rig.remote_runs() == []  # every file back and verified: the host's copy is gone


def test_a_file_swapped_for_a_link_after_the_listing_is_refused(rig, tmp_path):
    inv = rig.inventory(RESULT_OK)
    executor = executor_for(inv.host(HOST), inv, Path("runs"), rig.options(), say=rig.messages.append)
    executor.connect()
    step_dir = rig.work / "swap"
    step_dir.mkdir()
    (step_dir / "data.txt").write_text("mine\n")
    subprocess.run(["chown", "-R", "rkuser:rkuser", str(step_dir)], check=True)
    listing = executor.pullback.list_remote(str(step_dir))
    (remote,) = listing.files
    (step_dir / "data.txt").unlink()
    os.symlink("/etc/passwd", step_dir / "data.txt")
    out = tmp_path / "out"
    out.mkdir()
    try:
        refused = executor.pullback._pull_large(str(step_dir), [remote], out, None)
    finally:
        executor.close_connection()
    assert refused == [{"path": "data.txt", "reason": "the host refused to read it: cannot open it without following a"
                                                      " link (Too many levels of symbolic links)"}]
    assert not (out / "data.txt").exists()


def test_forged_listing_entries_are_refused_here_too():
    """A host can send any JSON: paths are checked on this machine, whatever the host-side lister does."""
    lines = [
        '{"path": "/etc/cron.d/x", "kind": "file", "size": 1, "dev": 1, "ino": 1}',
        '{"path": "../../outside", "kind": "file", "size": 1, "dev": 1, "ino": 1}',
        '{"path": "a/./b", "kind": "file", "size": 1, "dev": 1, "ino": 1}',
        '{"path": "ok.txt", "kind": "file", "size": -5, "dev": 1, "ino": 1}',
        '{"path": "ok2.txt", "kind": "file", "size": 3, "dev": 1, "ino": 2}',
        '["not", "an", "object"]',
        '{"path": "run.sh", "kind": "file", "size": 1, "dev": 1, "ino": 3}',
    ]
    listing = parse_listing("\n".join(lines), "host 'x'")
    assert [f.rel for f in listing.files] == ["ok2.txt"]
    assert [e["reason"] for e in listing.not_pulled] == [
        "absolute path", "the path climbs out or has empty parts", "the path climbs out or has empty parts",
        "the listing gives no valid size", "empty or not a name"]


def test_a_local_link_inside_the_step_dir_cannot_redirect_a_write(tmp_path):
    out = tmp_path / "step"
    out.mkdir()
    os.symlink(tmp_path, out / "escape")
    try:
        local_target(out, "escape/file.txt")
        raise AssertionError("a write through a link was allowed")
    except Exception as exc:  # noqa: BLE001 - PullStopped, checked by message
        assert str(exc) == f"escape/file.txt: resolves outside {out}; refused"
    assert ExitCode.HOST_ERROR == 4


def test_a_host_whose_python_lies_to_the_pull_back_cannot_plant_files(rig, tmp_path):
    """The host's interpreter itself is hostile: its listing names an absolute path, its reader answers garbage."""
    target = tmp_path / "planted-by-host.txt"
    lie = (f'  *"- list "*) printf \'{{"path": "{target}", "kind": "file", "size": 5, "dev": 1, "ino": 1}}\\n'
           '{"path": "result.json", "kind": "file", "size": 3, "dev": 1, "ino": 1}\\n\'; exit 0;;\n'
           '  *"- read-many "*) echo "not json at all"; exit 0;;\n')
    inv = rig.inventory(RESULT_OK)
    python = rig.work / "fake-python"
    python.write_text(python.read_text().replace('case "$*" in\n', 'case "$*" in\n' + lie, 1))
    outcome = run_kit(load_kit_file(KIT), KIT, inv.host(HOST), rig.runs, KIT.parent, say=rig.messages.append,
                      inventory=inv, options=rig.options())
    manifest = load_manifest(outcome.run_dir).to_json()
    assert run_exit_code(outcome) == ExitCode.HOST_ERROR
    assert manifest["status"] == "incomplete"
    assert manifest["detached"]["step"] == "fingerprint"  # the first step pulled back already met the lie
    assert manifest["status_detail"] == (f"host '{HOST}': the reader's answer for result.json is out of order; the"
                                         " files stay on the host")
    assert not target.exists()
    assert not any("Traceback" in m for m in rig.messages)
