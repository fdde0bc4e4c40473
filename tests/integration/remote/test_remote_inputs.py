"""A kit's step inputs over real SSH: `invoke repro tile-sweep --host <test host>` stages static-smem's result
for the sweep on the host (never the control machine's path), and the FlashInfer wheel from the control
machine's cache into the host's cache, both verified by sha256."""

from __future__ import annotations

import hashlib
import json

from reprokit.errors import ExitCode
from reprokit.records.run_dir import load_manifest, verify_record
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

WHEEL = "flashinfer_python-0.6.3-py3-none-any.whl"


def test_tile_sweep_gets_the_sweep_past_its_inputs_on_a_remote_host(tmp_path):
    work = host_workdir("h4", "inputs")
    inventory = write_inventory(tmp_path / "inv.yml", {"h4": {"workdir": work, "gpu_arch": "sm120"}})
    known = known_hosts_for(tmp_path / "known_hosts", "h4")
    # one tactic keeps nvcc's work short on this machine; the rest of the kit is as users run it
    proc = invoke_repro(tmp_path, inventory, known, "--host", "h4", "--set", "static-smem.variants=[14]", "--json",
                        "--quiet", kit="tile-sweep")
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    (run_dir,) = runs_in(tmp_path / "runs")
    manifest = load_manifest(run_dir).to_json()
    steps = {s["name"]: s for s in manifest["steps"]}
    assert {n: s["status"] for n, s in steps.items()} == {"probe": "ok", "static-smem": "ok",
                                                          "sweep": "no_device"}
    # the sweep got past its inputs: it stopped only for want of torch on this host (its GPU is the libcuda double)
    assert steps["sweep"]["reason"] == ("no CUDA device: torch is not importable: No module named 'torch';"
                                        " only compile-time predictions ran")
    prediction = run_dir / "steps" / "static-smem" / "result.json"
    (staged,) = steps["sweep"]["inputs"]
    remote_path = f"{work}/runs/{manifest['run_id']}/sweep/inputs/predicted/result.json"
    assert staged == {"param": "predicted", "origin": "step static-smem: result.json",
                      "sha256": hashlib.sha256(prediction.read_bytes()).hexdigest(),
                      "bytes": prediction.stat().st_size, "host_path": remote_path}
    assert json.loads((run_dir / "steps" / "sweep" / "params.json").read_text())["predicted"] == remote_path
    assert (run_dir / "steps" / "sweep" / "inputs" / "predicted" / "result.json").read_bytes() == prediction.read_bytes()
    # the wheel: from the control machine's cache into the host's, where the workload read it
    (wheel,) = steps["static-smem"]["inputs"]
    assert wheel["host_path"] == f"{work}/cache/reprokit/inputs/{wheel['sha256'][:16]}/{WHEEL}"
    result = json.loads(prediction.read_text())
    assert result["sources"]["wheel"] == {"file": WHEEL, "sha256": wheel["sha256"]}
    assert result["failing_tiles"] == ["128x256x128"]
    assert verify_record(run_dir) == []
    assert list((work / "runs").iterdir()) == []
