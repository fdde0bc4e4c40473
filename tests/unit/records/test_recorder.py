"""The recorder, the one writer of a run's record: what each event leaves on disk, read back as a kill at that point
would leave it (docs/reliability.md), and the events it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.records.events import Collected, Ended, Fingerprinted, InFlight, Judged, KeptOnHost, StepEnded
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Judgement, RunStatus, StepAt, StepEntry, Verdict
from reprokit.records.recorder import Recorder
from reprokit.records.run_dir import load_manifest, load_verdict, verify_record

HANDLE = {"launcher": "session", "id": "4242"}
NO_GPU = Fingerprint.from_json({"devices": [], "gpu_reason": "no NVIDIA driver"}, "fingerprint")


def on_disk(recorder: Recorder) -> dict:
    return json.loads((recorder.dir / "manifest.json").read_text())


def test_a_run_walked_through_the_recorder_leaves_each_state_on_disk(tmp_path: Path) -> None:
    recorder = Recorder.create(tmp_path, "r1", kit={"name": "demo"}, fingerprint=None, verdict=None)
    assert (on_disk(recorder)["status"], on_disk(recorder)["steps"], "in_flight" in on_disk(recorder)) == ("running", [], False)

    recorder.record(InFlight(StepAt("fingerprint", "t0", handle=HANDLE)))
    recorder.record(Fingerprinted(NO_GPU, {"torch": {"pinned": "2.9.1", "installed": None}}, ["the inventory says 1 GPU(s)"]))
    written = on_disk(recorder)
    assert "in_flight" not in written
    assert (written["fingerprint"]["gpu_reason"], written["preflight_notes"]) == ("no NVIDIA driver", ["the inventory says 1 GPU(s)"])

    recorder.record(InFlight(StepAt("probe", "t1")))  # before the launch: a kill here leaves a step with no handle
    assert on_disk(recorder)["in_flight"] == {"step": "probe", "since": "t1"}
    recorder.record(InFlight(StepAt("probe", "t1", handle=HANDLE)))  # launched: collect finds the step by it
    assert on_disk(recorder)["in_flight"] == {"step": "probe", "since": "t1", "handle": HANDLE}

    (recorder.step_dir("probe") / "result.json").write_text('{"status": "ok"}\n')
    recorder.record(StepEnded(StepEntry("probe", "smem-probe", "ok", started="t1", ended="t2", exit_code=0,
                                        result_file="steps/probe/result.json")))
    written = on_disk(recorder)
    assert ("in_flight" in written, [s["name"] for s in written["steps"]], written["status"]) == (False, ["probe"], "running")

    verdict = Verdict("PASS", "1 of 1 expectations held", [Judgement("fits", "probe", "PASS", "<= 101376", 99328, "")])
    recorder.record(Judged(verdict))
    assert load_verdict(recorder.dir) == verdict
    assert on_disk(recorder)["verdict"] == {"verdict": "PASS", "summary": "1 of 1 expectations held"}

    recorder.record(Ended(RunStatus.COMPLETE))
    written = on_disk(recorder)
    assert (written["status"], sorted(written["artifacts"])) == ("complete", ["steps/probe/result.json", "verdict.json"])
    assert verify_record(recorder.dir) == []
    assert load_manifest(recorder.dir) == recorder.manifest


def test_a_step_kept_on_the_host_is_detached_with_its_handle(tmp_path: Path) -> None:
    recorder = Recorder.create(tmp_path, "r1", kit={"name": "demo"})
    recorder.record(InFlight(StepAt("serve", "t1", handle=HANDLE)))
    recorder.record(KeptOnHost(RunStatus.DETACHED, "host h2 unreachable", StepAt("serve", "t3", "/w/runs/r1/serve", HANDLE)))
    written = on_disk(recorder)
    assert (written["status"], written["status_detail"], "in_flight" in written) == ("detached", "host h2 unreachable", False)
    assert written["detached"] == {"step": "serve", "remote_dir": "/w/runs/r1/serve", "since": "t3", "handle": HANDLE}


def test_a_collect_is_recorded_in_the_verdicts_write(tmp_path: Path) -> None:
    recorder = Recorder.create(tmp_path, "r1", kit={"name": "demo"})
    recorder.record(KeptOnHost(RunStatus.INCOMPLETE, "disk full", StepAt("probe", "t1", "/w/runs/r1/probe", HANDLE)))
    entry = StepEntry("probe", "smem-probe", "ok", exit_code=0, collected=True)
    verdict = Verdict("INCONCLUSIVE", "nothing judged")
    recorder.record(Collected([entry], NO_GPU, RunStatus.KILLED, "collected after the run was incomplete"), Judged(verdict))
    written = on_disk(recorder)
    assert (written["status"], written["status_detail"], written["verdict"]["verdict"]) == (
        "killed", "collected after the run was incomplete", "INCONCLUSIVE")
    assert ("detached" in written, "in_flight" in written, [s["name"] for s in written["steps"]]) == (False, False, ["probe"])


def test_the_recorder_refuses_what_is_no_event_and_anything_after_the_end(tmp_path: Path) -> None:
    recorder = Recorder.create(tmp_path, "r1", kit={"name": "demo"})
    before = (recorder.dir / "manifest.json").read_bytes()
    with pytest.raises(TypeError, match="not a run event"):
        recorder.record({"status": "complete"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a run ends in a final status, not 'running'"):
        recorder.record(Ended(RunStatus.RUNNING))
    with pytest.raises(ValueError, match=r"r1: StepEnded recorded after the run ended \(complete\)"):
        recorder.record(Ended(RunStatus.COMPLETE), StepEnded(StepEntry("probe", "smem-probe", "ok")))
    assert (recorder.dir / "manifest.json").read_bytes() == before  # nothing of a refused call was written
    assert (recorder.manifest.status, recorder.manifest.steps) == (RunStatus.RUNNING, [])  # nor changed in memory
