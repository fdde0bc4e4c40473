"""The manifest's fingerprint is typed: fields read by name, other keys kept in their order, bad fields one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.errors import ConfigError, ExitCode
from reprokit.records.fingerprint import Device, Fingerprint
from reprokit.records.run_dir import load_manifest
from tests.conftest import REPO, run_invoke

EVIDENCE = REPO / "evidence"
H200 = EVIDENCE / "h200-ssh" / "20261201T095836Z-ep8-crash-h200-7d7c"
NO_DRIVER = EVIDENCE / "triton-cross-compile" / "20261201T102552Z-triton-moe-configs-local-ce94"
FINGERPRINTS = sorted(EVIDENCE.rglob("manifest.json"))


@pytest.mark.parametrize("path", FINGERPRINTS, ids=lambda p: p.parent.name)
def test_every_evidence_fingerprint_writes_back_the_keys_it_was_read_with_in_their_order(path: Path) -> None:
    as_written = json.loads(path.read_text(encoding="utf-8"))["fingerprint"]
    fingerprint = load_manifest(path.parent).fingerprint
    assert json.dumps(fingerprint.to_json()) == json.dumps(as_written)


def test_the_fields_reprokit_reads_are_typed() -> None:
    fingerprint = load_manifest(H200).fingerprint
    assert fingerprint.gpu_arches == ["sm90"]
    assert fingerprint.installed == {"torch": "2.11.0", "triton": "3.6.0"}
    assert len(fingerprint.packages) == 10 and fingerprint.packages["vllm"] is None
    assert (fingerprint.driver.driver_release, fingerprint.driver.cuda_driver_api, fingerprint.nvcc) == (
        "580.159.04", "13.0", "13.0")
    [device] = fingerprint.devices
    assert (device.index, device.name, device.multiprocessor_count, device.max_shared_memory_per_block_optin_bytes) == (
        0, "NVIDIA H200", 132, 232448)
    assert fingerprint.host.in_container is True and fingerprint.gpu_reason is None


def test_a_host_without_a_driver_has_its_keys_in_the_order_the_workload_wrote_them() -> None:
    fingerprint = load_manifest(NO_DRIVER).fingerprint
    assert (fingerprint.driver, fingerprint.devices, fingerprint.gpu_arches, fingerprint.gpu_status) == (
        None, [], [], "no_driver")
    assert fingerprint.gpu_reason.startswith("no NVIDIA driver on this host (libcuda.so.1 not found)")
    assert list(fingerprint.to_json())[-4:] == ["gpu_status", "gpu_reason", "devices", "driver"]


def damaged(tmp_path: Path, change) -> Path:
    data = json.loads((H200 / "manifest.json").read_text(encoding="utf-8"))
    change(data["fingerprint"])
    run_dir = tmp_path / "x"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text(json.dumps(data, indent=2) + "\n")
    return run_dir


def second_device(**fields) -> dict:
    return {"index": 1, "name": "NVIDIA H200", "gpu_arch": "sm90", **fields}


BAD_FIELDS = [
    (lambda fp: fp["devices"].append(second_device(gpu_arch=7)), "fingerprint.devices[1].gpu_arch: expected a string, got 7"),
    (lambda fp: fp["devices"].append({"index": 1}),
     "fingerprint.devices[1].gpu_arch: expected a string, got nothing (the field is missing)"),
    (lambda fp: fp["devices"][0].update(max_shared_memory_per_block_optin_bytes="232448"),
     "fingerprint.devices[0].max_shared_memory_per_block_optin_bytes: expected an integer or null, got '232448'"),
    (lambda fp: fp["devices"][0].update(multiprocessor_count=True),
     "fingerprint.devices[0].multiprocessor_count: expected an integer or null, got True"),
    (lambda fp: fp.update(devices={"0": {}}), "fingerprint.devices: expected a list, got {'0': {}}"),
    (lambda fp: fp.update(devices=["sm90"]), "fingerprint.devices[0]: expected an object, got 'sm90'"),
    (lambda fp: fp["packages"].update(torch=2.11), "fingerprint.packages.torch: expected a string or null, got 2.11"),
    (lambda fp: fp["driver"].update(driver_release=580), "fingerprint.driver.driver_release: expected a string or null, got 580"),
    (lambda fp: fp.update(gpu_reason=["none"]), "fingerprint.gpu_reason: expected a string or null, got ['none']"),
    (lambda fp: fp["host"].update(in_container="yes"), "fingerprint.host.in_container: expected true or false or null, got 'yes'"),
]


@pytest.mark.parametrize(("change", "message"), BAD_FIELDS, ids=[m.split(":")[0] for _, m in BAD_FIELDS])
def test_a_bad_fingerprint_field_is_one_line_naming_its_path(tmp_path: Path, change, message: str) -> None:
    run_dir = damaged(tmp_path, change)
    with pytest.raises(ConfigError) as error:
        load_manifest(run_dir)
    assert str(error.value) == f"{run_dir / 'manifest.json'}: {message}"
    assert error.value.exit_code == ExitCode.BAD_INPUT


def test_check_record_on_a_damaged_fingerprint_exits_2_with_the_path(tmp_path: Path) -> None:
    run_dir = damaged(tmp_path, lambda fp: fp["devices"].append(second_device(gpu_arch=7)))
    done = run_invoke("check-record", str(run_dir))
    assert done.returncode == 2
    assert f"{run_dir / 'manifest.json'}: fingerprint.devices[1].gpu_arch: expected a string, got 7" in done.stderr


def test_keys_reprokit_does_not_read_are_kept_where_they_were(tmp_path: Path) -> None:
    def newer_workload(fp: dict) -> None:  # a later fingerprint version: new keys at the top, in a device and the driver
        fp["devices"][0] = {"mig_mode": "disabled", **fp["devices"][0], "ecc": {"enabled": True}}
        fp["driver"]["nvml"] = "13.580.159"
        items = list(fp.items())
        fp.clear()
        fp.update(items[:2] + [("cuda_runtime", "13.0.2")] + items[2:])
    run_dir = damaged(tmp_path, newer_workload)
    manifest = load_manifest(run_dir)
    device = manifest.fingerprint.devices[0]
    assert (device.gpu_arch, device.other) == ("sm90", {"mig_mode": "disabled", "ecc": {"enabled": True}})
    assert manifest.fingerprint.other == {"cuda_runtime": "13.0.2"}
    assert json.dumps(manifest.to_json(), indent=2) + "\n" == (run_dir / "manifest.json").read_text()


def test_the_workloads_result_is_read_through_the_model(tmp_path: Path) -> None:
    where = str(tmp_path / "fingerprint" / "result.json")
    result = {"workload": "fingerprint", "schema_version": 1, "status": "ok", "devices": [second_device(index=0)],
              "gpu_status": "ok", "gpu_reason": None}
    read = Fingerprint.of_workload(result, None, where)
    assert list(read.to_json()) == ["schema_version", "status", "devices", "gpu_status", "gpu_reason"]  # no `workload`
    assert read.devices == [Device(gpu_arch="sm90", index=0, name="NVIDIA H200")]
    broken = Fingerprint.of_workload({**result, "devices": [{"index": 0, "gpu_arch": None}]}, None, where)
    assert broken.to_json() == {"gpu_status": "unknown", "devices": [],
                                "gpu_reason": f"{where}: devices[0].gpu_arch: expected a string, got None"}
    missing = Fingerprint.of_workload(None, "no result.json (the workload ended before writing it)", where)
    assert (missing.devices, missing.gpu_reason) == ([], "no result.json (the workload ended before writing it)")
