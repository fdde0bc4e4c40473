"""The ep-moe step's control-plane side: N from the host's GPUs, the inventory pinning a host to its GPUs (the
fan-out with a GPU per host), the kit as shipped. The GPU side ran on an H200 (evidence/h200-ep-moe-n1)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from reprokit.config.inventory import Inventory, local_host
from reprokit.config.kit import load_kit_file
from reprokit.errors import ConfigError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.launch import StepSpec
from reprokit.hosts.runtimes import StepPlace
from reprokit.hosts.runtimes.docker import DockerRuntime
from reprokit.hosts.runtimes.native import NativeRuntime
from reprokit.plan.planner import plan_step
from reprokit.records.fingerprint import Fingerprint
from tests.conftest import REPO

KITS = REPO / "kits"
FANOUT_INVENTORY = REPO / "tests" / "gpu" / "fanout_inventory.sh"


def _gpus(count: int) -> Fingerprint:
    return Fingerprint.from_json({"devices": [{"index": i, "gpu_arch": "sm90"} for i in range(count)]}, "test")


def _ep_moe_step():
    kit = load_kit_file(KITS / "ep-moe-autotune.yml")
    return kit, next(s for s in kit.steps if s.uses == "ep-moe")


@pytest.mark.parametrize("count", [1, 8])
def test_world_size_host_is_the_number_of_gpus_the_host_has(count: int) -> None:
    kit, step = _ep_moe_step()
    planned = plan_step(step, kit, KITS, _gpus(count), {}, host=replace(local_host(), gpu_count=count))
    assert planned.skip_reason is None
    assert planned.params["world_size"] == count
    assert planned.params["flashinfer"] == "0.6.18"  # from the kit's pin


def test_an_inventory_gpu_count_the_host_does_not_show_plans_the_step_out() -> None:
    kit, step = _ep_moe_step()
    planned = plan_step(step, kit, KITS, _gpus(1), {}, host=replace(local_host(), name="h8", gpu_count=8))
    assert planned.skip_reason == ("not run: world_size 'host': the inventory says 8 GPU(s) on h8, the workloads see 1;"
                                   " fix gpu_count or the host's CUDA_VISIBLE_DEVICES")


def test_no_gpu_plans_the_step_out_with_the_fingerprints_reason() -> None:
    kit, step = _ep_moe_step()
    none = Fingerprint.from_json({"devices": [], "gpu_reason": "no NVIDIA driver"}, "test")
    assert plan_step(step, kit, KITS, none, {}).skip_reason == "not run: needs a CUDA GPU; no NVIDIA driver"


def _fanout(tmp_path: Path, hosts: int, gpus: int):
    text = subprocess.run(["bash", str(FANOUT_INVENTORY), str(hosts), str(gpus), "/w", "2222", "/opt/py"],
                          capture_output=True, text=True, check=True).stdout
    path = tmp_path / "fanout.yml"
    path.write_text(text)
    return load_inventory(path)


def test_fanout_inventory_gives_each_of_eight_hosts_its_own_gpu(tmp_path: Path) -> None:
    inventory = _fanout(tmp_path, 8, 8)
    hosts = [inventory.hosts[f"g{i}"] for i in range(1, 9)]
    assert [h.cuda_visible_devices for h in hosts] == [str(i) for i in range(8)]
    assert {h.gpu_count for h in hosts} == {1} and len({h.workdir for h in hosts}) == 8
    assert inventory.groups["fan"] == [f"g{i}" for i in range(1, 9)]


def test_fanout_inventory_on_one_gpu_shares_it(tmp_path: Path) -> None:
    inventory = _fanout(tmp_path, 8, 1)
    assert {inventory.hosts[f"g{i}"].cuda_visible_devices for i in range(1, 9)} == {"0"}


def _place(tmp_path: Path) -> StepPlace:
    return StepPlace(run_id="r1", step_name="probe", remote_dir=str(tmp_path / "step"), code_dir=str(tmp_path / "code"),
                     models_present=False, with_secrets=False)


def test_the_pinned_gpu_reaches_the_workload_in_every_runtime(tmp_path: Path) -> None:
    host = replace(_fanout(tmp_path, 8, 8).hosts["g4"])
    native = NativeRuntime(host).command("reprokit.workloads.smem_probe", None, _place(tmp_path))
    assert " CUDA_VISIBLE_DEVICES=3 " in native
    docker = DockerRuntime(host, {"workload": "img@sha256:" + "0" * 64}).command(
        "reprokit.workloads.smem_probe", "workload", _place(tmp_path))
    assert " -e CUDA_VISIBLE_DEVICES=3 " in docker
    unpinned = NativeRuntime(replace(host, cuda_visible_devices=None)).command("m", None, _place(tmp_path))
    assert "CUDA_VISIBLE_DEVICES" not in unpinned


def test_the_local_executor_exports_the_pinned_gpu(tmp_path: Path) -> None:
    host = replace(local_host(), cuda_visible_devices="5,6")
    spec = StepSpec(module="reprokit.workloads.fingerprint", params={}, out_dir=tmp_path / "out",
                    log_path=tmp_path / "out" / "log.txt", timeout_s=60, name="env")
    executor = executor_for(host, Inventory(path=None, hosts={host.name: host}), tmp_path / "runs", ConnectOptions())
    executor.connect()
    executor.prepare("r1")
    try:
        executor.run_step(spec)
    finally:
        executor.finish()
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["host"]["cuda_visible_devices"] == "5,6"


def test_a_malformed_cuda_visible_devices_is_one_line_naming_the_host(tmp_path: Path) -> None:
    path = tmp_path / "inv.yml"
    path.write_text("all:\n  hosts:\n    g1:\n      cuda_visible_devices: 'all'\n")
    with pytest.raises(ConfigError) as caught:
        load_inventory(path)
    assert "host 'g1': field 'cuda_visible_devices'" in str(caught.value) and "\n" not in str(caught.value)


def _judged(result: dict):
    from reprokit.records.models import StepEntry  # noqa: PLC0415
    from reprokit.report.judge import judge  # noqa: PLC0415
    from reprokit.step_kinds import STEP_KINDS  # noqa: PLC0415

    kit, step = _ep_moe_step()
    STEP_KINDS["ep-moe"].read_result(result, "result.json")  # the kind's model accepts it
    h200 = Fingerprint.from_json({"devices": [{"index": 0, "name": "NVIDIA H200", "gpu_arch": "sm90"}]}, "test")
    return judge(kit, {step.name: StepEntry(step.name, "ep-moe", "ok", result=result)}, h200)


def test_the_kits_expectations_on_the_real_n1_result() -> None:
    """The H200 run's result with its figures read from the rank logs (figures-from-logs.json): all hold."""
    run = REPO / "evidence" / "h200-ep-moe-n1" / "run1"
    result = json.loads((run / "result.json").read_text())
    figures = json.loads((run / "figures-from-logs.json").read_text())
    figures.pop("recomputed_from")
    verdict = _judged({**result, **figures})
    assert [(j.name, j.status.value) for j in verdict.expectations if j.status.value != "PASS"] == []
    assert len(verdict.expectations) == 8 and verdict.verdict.value == "PASS"


def test_the_kit_fails_the_result_whose_ranks_counted_nothing() -> None:
    """The result as the GPU host wrote it, before the tactics were read from the logs: zero tactics counted, so
    the plain run did not show the blocked tactics, and the kit says the blocklist's effect is unproven."""
    result = json.loads((REPO / "evidence" / "h200-ep-moe-n1" / "run1" / "result.json").read_text())
    verdict = _judged(result)
    assert [j.name for j in verdict.expectations if j.status.value == "FAIL"] == ["plain-autotune-profiles-the-blocked-tactics"]
