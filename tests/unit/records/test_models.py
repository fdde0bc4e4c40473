"""The record's typed models: every committed evidence manifest round-trips byte for byte; bad fields are one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reprokit.errors import ConfigError, ExitCode
from reprokit.records.models import LeftOnHost, Manifest, StagedInput, StepAt, StepEntry
from reprokit.records.run_dir import RunRecord, load_manifest, load_verdict, verify_record
from tests.conftest import REPO, run_invoke

EVIDENCE_MANIFESTS = sorted((REPO / "evidence").rglob("manifest.json"))
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[a-z0-9-]+-[0-9a-f]{4}")
EP8_H200 = REPO / "evidence" / "h200" / "20261129T095816Z-ep8-crash-local-8aaa"


def written(manifest: Manifest) -> str:
    """The manifest's bytes as ``RunRecord.save`` writes them."""
    return json.dumps(manifest.to_json(), indent=2, default=str) + "\n"


def test_every_run_directory_of_the_evidence_is_a_record() -> None:
    """Each directory named like a run (its id) holds a manifest, and each manifest is in such a directory: the
    round trip below reads every record the tree keeps."""
    run_dirs = sorted(path for path in (REPO / "evidence").rglob("*") if path.is_dir() and RUN_ID.fullmatch(path.name))
    assert [path.parent for path in EVIDENCE_MANIFESTS] == run_dirs and len(run_dirs) >= 17


@pytest.mark.parametrize("path", EVIDENCE_MANIFESTS, ids=lambda p: p.parent.name)
def test_every_evidence_manifest_round_trips_byte_for_byte(path: Path) -> None:
    manifest = load_manifest(path.parent)
    assert written(manifest) == path.read_text(encoding="utf-8")
    assert verify_record(path.parent) == []


def test_fields_are_typed() -> None:
    manifest = load_manifest(EP8_H200)
    assert (manifest.status, manifest.kit_name, manifest.host_name, manifest.kit.path) == (
        "complete", "ep8-crash", "local", "kits/ep8-crash.yml")
    assert [(s.name, s.status) for s in manifest.steps] == [
        ("probe", "ok"), ("static-smem", "ok"), ("sweep", "ok"), ("serve", "missing_dependency"), ("triage", "not_run")]
    assert manifest.step("probe").exit_code == 0 and manifest.step("probe").log == "steps/probe/step.log"
    assert manifest.step("triage").ended is None and manifest.step("nope") is None
    assert len(manifest.artifacts) == 36 and manifest.artifacts["verdict.json"].bytes > 0
    assert manifest.verdict.verdict == "INCONCLUSIVE"


def damaged(tmp_path: Path, change) -> Path:
    data = json.loads((EP8_H200 / "manifest.json").read_text())
    change(data)
    run_dir = tmp_path / "x"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text(json.dumps(data))
    return run_dir


STATUSES = "ok|bad_params|no_driver|no_device|check_failed|missing_dependency|timeout|error|not_run"
BAD_FIELDS = [
    (lambda m: m["steps"][2].update(status=7), f"steps[2].status: expected one of {STATUSES}, got 7"),
    (lambda m: m.update(status="paused"),
     "status: expected one of running|complete|failed|interrupted|detached|incomplete|killed, got 'paused'"),
    (lambda m: m.pop("run_id"), "run_id: expected a string, got nothing (the field is missing)"),
    (lambda m: m["owner"].update(pid="12"), "owner.pid: expected an integer, got '12'"),
    (lambda m: m["kit"].update(name=None), "kit.name: expected a string, got None"),
    (lambda m: m["artifacts"]["verdict.json"].update(bytes=True),
     "artifacts['verdict.json'].bytes: expected an integer, got True"),
    (lambda m: m["artifacts"]["verdict.json"].update(sha256="abc"),
     "artifacts['verdict.json'].sha256: expected 64 lowercase hex digits, got 'abc'"),
    (lambda m: m["steps"][0].update(duration_s="1.5"), "steps[0].duration_s: expected a number or null, got '1.5'"),
    (lambda m: m["steps"][1].update(inputs=["wheel"]), "steps[1].inputs[0]: expected an object, got 'wheel'"),
    (lambda m: m["steps"][1].update(inputs=[{"param": "wheel"}]),
     "steps[1].inputs[0].origin: expected a string, got nothing (the field is missing)"),
    (lambda m: m["steps"][1].update(not_pulled=[{"path": "pipe", "reason": 7}]),
     "steps[1].not_pulled[0].reason: expected a string, got 7"),
    (lambda m: m.update(steps={}), "steps: expected a list, got {}"),
    (lambda m: m["pins"].update(torch=2.9), "pins.torch: expected a string, got 2.9"),
    (lambda m: m.update(verdict={"verdict": "PASS"}), "verdict.summary: expected a string, got nothing (the field is missing)"),
    (lambda m: m.update(secrets=["HF_TOKEN", 1]), "secrets[1]: expected a string, got 1"),
    (lambda m: m.update(colour="blue"), "colour: not a field of a run manifest; the record is damaged or of a newer reprokit"),
    (lambda m: m["steps"][4].update(resut={}),
     "steps[4].resut: not a field of a step's entry; the record is damaged or of a newer reprokit"),
    # a field left out when unset is never null in a file; the result lives in result.json; steps are never left out
    (lambda m: m["steps"][0].update(log=None), "steps[0].log: expected a string, got None"),
    (lambda m: m.update(in_flight=None), "in_flight: expected an object, got None"),
    (lambda m: m["steps"][0].update(result={"status": "ok"}),
     "steps[0].result: not a field of a step's entry; the record is damaged or of a newer reprokit"),
    (lambda m: m.pop("steps"), "steps: expected a list, got nothing (the field is missing)"),
]


@pytest.mark.parametrize(("change", "message"), BAD_FIELDS, ids=[m.split(":")[0] for _, m in BAD_FIELDS])
def test_a_bad_field_is_one_line_naming_file_and_field(tmp_path: Path, change, message: str) -> None:
    run_dir = damaged(tmp_path, change)
    with pytest.raises(ConfigError) as error:
        load_manifest(run_dir)
    assert str(error.value) == f"{run_dir / 'manifest.json'}: {message}"
    assert error.value.exit_code == ExitCode.BAD_INPUT


def test_check_record_on_a_damaged_manifest_exits_2_with_the_field(tmp_path: Path) -> None:
    run_dir = damaged(tmp_path, lambda m: m["steps"][2].update(status=7))
    done = run_invoke("check-record", str(run_dir))
    assert done.returncode == 2
    assert f"{run_dir / 'manifest.json'}: steps[2].status: expected one of {STATUSES}, got 7" in done.stderr


def test_entries_keep_the_key_order_the_runner_always_wrote() -> None:
    workload = StepEntry("probe", "smem-probe", "ok", started="s", ended="e", duration_s=1.5, exit_code=0,
                         log="steps/probe/step.log", result_file="steps/probe/result.json", result={"status": "ok"})
    assert list(workload.to_json()) == ["name", "uses", "started", "ended", "duration_s", "exit_code", "log", "status",
                                        "reason", "result_file"]
    timed_out = StepEntry("probe", "smem-probe", "timeout", reason="timed out", started="s", ended="e", duration_s=9.0,
                          log="steps/probe/step.log")
    assert timed_out.to_json()["exit_code"] is None  # written as null, as before
    control = StepEntry("triage", "triage", "ok", started="s", inputs=[StagedInput("logs", "step serve", "0" * 64, 3, "/r/x.log")], ended="e", duration_s=0.1,
                        exit_code=0, result_file="steps/triage/result.json")
    assert list(control.to_json()) == ["name", "uses", "started", "inputs", "status", "reason", "ended", "duration_s",
                                       "exit_code", "result_file"]
    skipped = StepEntry("serve", "serve", "not_run", reason="not run: needs a CUDA GPU", started="s", ended="s")
    assert list(skipped.to_json()) == ["name", "uses", "started", "status", "reason", "ended"]
    assert "result" not in workload.to_json()  # the result lives in result.json, never in the manifest


def test_a_record_written_through_the_models_reads_back_equal(tmp_path: Path) -> None:
    record = RunRecord.create(tmp_path, "r1", kit={"name": "demo", "path": "kits/demo.yml"}, pins={"torch": "2.9.1"},
                              host={"name": "local"}, images={}, secrets=[], selection={"only": [], "skip": [], "set": {}},
                              fingerprint=None, verdict=None)
    record.update(in_flight=StepAt("probe", "2026-12-01T10:00:00Z"))
    record.set_step(StepEntry("probe", "smem-probe", "ok", started="a", ended="b", duration_s=1.0, exit_code=0,
                              log="steps/probe/step.log", not_pulled=[LeftOnHost("pipe", "a fifo")]))
    record.finish("interrupted", status_detail="stopped by Ctrl-C or SIGTERM")
    again = load_manifest(record.dir)
    assert again == record.manifest
    assert written(again) == (record.dir / "manifest.json").read_text()
    keys = list(json.loads((record.dir / "manifest.json").read_text()))
    assert keys[-3:] == ["artifacts", "in_flight", "status_detail"]


def test_create_refuses_bad_fields_before_writing_anything(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"r1/manifest.json \(being created\): pins.torch: expected a string, got 2"):
        RunRecord.create(tmp_path, "r1", kit={"name": "demo"}, pins={"torch": 2})
    assert list(tmp_path.iterdir()) == []
    record = RunRecord.create(tmp_path, "r2", kit={"name": "demo"})
    with pytest.raises(AttributeError, match="a run manifest has no field 'colour'"):
        record.update(colour="blue")


@pytest.mark.parametrize("path", sorted((REPO / "evidence").rglob("verdict.json")), ids=lambda p: p.parent.name)
def test_every_evidence_verdict_round_trips_byte_for_byte(path: Path) -> None:
    verdict = load_verdict(path.parent)
    assert json.dumps(verdict.to_json(), indent=2, default=str) + "\n" == path.read_text(encoding="utf-8")
    assert verdict.verdict == load_manifest(path.parent).verdict.verdict


def test_a_bad_verdict_field_is_one_line(tmp_path: Path) -> None:
    data = json.loads((EP8_H200 / "verdict.json").read_text())
    data["expectations"][3]["status"] = "MAYBE"
    (tmp_path / "verdict.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError) as error:
        load_verdict(tmp_path)
    assert str(error.value) == (f"{tmp_path / 'verdict.json'}: expectations[3].status: expected one of"
                                " PASS|FAIL|INCONCLUSIVE, got 'MAYBE'")
    del data["expectations"][3]["observed"]
    (tmp_path / "verdict.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"expectations\[3\]\.observed: expected a value \(null when none\), got nothing"):
        load_verdict(tmp_path)
    assert load_verdict(tmp_path / "nowhere") is None  # a run that was never judged
