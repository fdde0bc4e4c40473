"""Planning and staging of a step's declared inputs (reprokit/plan/inputs.py, reprokit/hosts/host_files.py)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from reprokit.config.inventory import local_host
from reprokit.config.kit import load_kit_file
from reprokit.hosts.factory import ConnectOptions, executor_for
from reprokit.hosts.host_files import container_mounts
from reprokit.plan.inputs import resolve_inputs
from reprokit.plan.planner import plan_step
from reprokit.plan.staging import stage_inputs
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import StepEntry
from reprokit.step_kinds import STEP_KINDS
from tests.conftest import REPO

KITS = REPO / "kits"
WHEEL = "flashinfer_python-0.6.3-py3-none-any.whl"


def local_executor(host, runs_dir):
    """This machine's executor, ready for a run R1's steps (as ``prepare`` leaves it, without its lock)."""
    executor = executor_for(host, None, runs_dir, ConnectOptions())
    executor.run_id = "R1"
    return executor


@pytest.fixture
def control_cache(tmp_path, monkeypatch):
    """The control machine's cache holding the pinned wheel (any bytes: staging only hashes and copies it)."""
    cache = tmp_path / "control-cache"
    (cache / "wheels").mkdir(parents=True)
    (cache / "wheels" / WHEEL).write_bytes(b"wheel bytes")
    monkeypatch.setenv("REPROKIT_CACHE", str(cache))
    return cache


def record_with(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    record = tmp_path / "run"
    for rel, text in files.items():
        path = record / "steps" / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return record


def test_the_planner_reads_declarations_not_kind_names():
    declared = {name: [(i.param, i.from_step or i.from_control) for i in kind.inputs] for name, kind in STEP_KINDS.items()}
    assert {name: declared[name] for name in ("smem-probe", "static-smem", "tile-sweep", "serve", "triage")} == {
        "smem-probe": [], "static-smem": [("wheel", "flashinfer-wheel")], "tile-sweep": [("predicted", "static-smem")],
        "serve": [], "triage": [("logs", "serve")]}
    assert [(p.param, p.variable) for p in STEP_KINDS["serve"].host_paths] == [("model", "models_dir")]
    source = (REPO / "reprokit" / "plan" / "planner.py").read_text()
    assert "predicted" not in source and "logs_from" not in source  # inputs come from the declarations


def test_an_earlier_result_is_staged_into_the_step_and_named_by_its_host_path(tmp_path):
    record = record_with(tmp_path, "static-smem", {"result.json": '{"status": "ok"}'})
    steps = {"static-smem": StepEntry("static-smem", "static-smem", status="ok")}
    kit = load_kit_file(KITS / "tile-sweep.yml")
    sweep = next(s for s in kit.steps if s.uses == "tile-sweep")
    planned = plan_step(sweep, kit, KITS, Fingerprint.from_json({"devices": [{"gpu_arch": "sm90"}]}, "test"), steps)
    executor = local_executor(local_host(), tmp_path / "runs")
    out_dir = record / "steps" / "sweep"
    stage_inputs(planned, executor, steps, record, out_dir)
    assert planned.skip_reason is None  # staged into the step's directory on the host, which comes back with the record
    staged = tmp_path / "runs" / ".hosts" / "local" / "runs" / "R1" / "sweep" / "inputs" / "predicted" / "result.json"
    assert planned.params["predicted"] == str(staged)
    assert staged.read_text() == '{"status": "ok"}'
    assert [i.to_json() for i in planned.inputs] == [{"param": "predicted", "origin": "step static-smem: result.json",
                               "sha256": hashlib.sha256(b'{"status": "ok"}').hexdigest(), "bytes": 16,
                               "host_path": str(staged)}]


def test_a_missing_input_is_a_reason_naming_it_never_bad_params(tmp_path):
    steps = {"static-smem": StepEntry("static-smem", "static-smem", status="missing_dependency", reason="nvcc not found")}
    files, reason = resolve_inputs(STEP_KINDS["tile-sweep"], {}, steps, tmp_path)
    assert files == []
    assert reason == ("not run: input 'predicted' (the static prediction (static-smem's result.json)) is missing:"
                      " step 'static-smem' did not produce it (missing_dependency: nvcc not found)")
    ok_but_empty = {"static-smem": StepEntry("static-smem", "static-smem", status="ok")}
    _, reason = resolve_inputs(STEP_KINDS["tile-sweep"], {}, ok_but_empty, tmp_path)
    assert reason == (f"not run: input 'predicted' (the static prediction (static-smem's result.json)) is missing:"
                      f" step 'static-smem' left no result.json in {tmp_path / 'steps' / 'static-smem'}")
    # optional: a kit without a static-smem step sweeps without a prediction
    assert resolve_inputs(STEP_KINDS["tile-sweep"], {}, {}, tmp_path) == ([], None)
    # required: a triage without a server step says so
    assert resolve_inputs(STEP_KINDS["triage"], {}, {}, tmp_path) == (
        [], "not run: input 'logs' (the server logs of serve) has no producer: no 'serve' step runs before it")


def test_triage_takes_the_logs_of_the_step_its_parameter_names(tmp_path):
    record = record_with(tmp_path, "serve-b", {"server.log": "a", "rank1/server.log.gz": "b", "bench.jsonl": "c"})
    steps = {"serve-a": StepEntry("serve-a", "serve", status="ok"), "serve-b": StepEntry("serve-b", "serve", status="ok")}
    files, reason = resolve_inputs(STEP_KINDS["triage"], {"logs_from": "serve-b"}, steps, record)
    assert reason is None
    assert [f.origin for f in files] == ["step serve-b: rank1/server.log.gz", "step serve-b: server.log"]


def test_the_wheel_comes_from_the_control_machines_cache_and_stays_in_the_hosts(tmp_path, control_cache):
    files, reason = resolve_inputs(STEP_KINDS["static-smem"], {"flashinfer": "0.6.3"}, {}, tmp_path)
    assert reason is None
    (wheel,) = files
    assert (wheel.param, wheel.origin, wheel.keep_on_host, wheel.size_bytes) == ("wheel", f"control cache: {WHEEL}", True, 11)
    assert wheel.source == control_cache / "wheels" / WHEEL
    # the local host is the control machine: its cache is used where it is, nothing copied into the record
    staged = local_executor(local_host(), tmp_path / "runs").stage_inputs("static-smem", tmp_path / "out", files)
    assert staged == [(wheel, str(wheel.source))]
    assert not (tmp_path / "out").exists()


def test_a_bare_model_name_is_taken_in_the_hosts_models_dir_and_checked_there(tmp_path):
    kit = load_kit_file(KITS / "ep8-crash.yml")
    serve = next(s for s in kit.steps if s.uses == "serve")
    host = replace(local_host(), models_dir=str(tmp_path / "models"))
    sm120 = Fingerprint.from_json({"devices": [{"index": 0, "gpu_arch": "sm120"}]}, "test")
    planned = plan_step(serve, kit, KITS, sm120, {}, host=host)
    assert planned.params["model"] == f"{tmp_path}/models/GLM-5-NVFP4"
    executor = local_executor(host, tmp_path / "runs")
    stage_inputs(planned, executor, {}, tmp_path, tmp_path / "out")
    assert planned.skip_reason == (  # the built-in host `local` has no inventory entry to set models_dir in
        f"not run: model {tmp_path}/models/GLM-5-NVFP4 is not on host 'local'; put it there, or pass where it is:"
        " --set serve.model=/path/to/GLM-5-NVFP4")
    (tmp_path / "models" / "GLM-5-NVFP4").mkdir(parents=True)
    planned.skip_reason = None
    stage_inputs(planned, executor, {}, tmp_path, tmp_path / "out")
    assert planned.skip_reason is None


def test_containers_see_the_models_read_only_and_the_caches_read_write_at_the_hosts_paths():
    host = replace(local_host(), workdir="/var/lib/reprokit", models_dir="/data/models")
    assert container_mounts(host, models_present=True) == [
        "-v", "/var/lib/reprokit/cache:/var/lib/reprokit/cache", "-v", "/data/models:/data/models:ro",
        "-e", "REPROKIT_CACHE=/var/lib/reprokit/cache/reprokit", "-e", "HF_HOME=/var/lib/reprokit/cache/huggingface",
        "-e", "TRITON_CACHE_DIR=/var/lib/reprokit/cache/triton",
        "-e", "FLASHINFER_WORKSPACE_BASE=/var/lib/reprokit/cache/flashinfer"]
    # no -v for a models directory the host lacks: docker would create it, empty and owned by root
    assert "/data/models:/data/models:ro" not in container_mounts(replace(host, cache_dir="/srv/c"), models_present=False)
    assert container_mounts(replace(host, cache_dir="/srv/c"), models_present=False)[:2] == ["-v", "/srv/c:/srv/c"]


def test_kits_pass_only_flags_their_sglang_release_has():
    from reprokit.errors import HostError
    from reprokit.upstream.args import kit_flag_problems

    kit = load_kit_file(KITS / "ep8-crash.yml")
    try:
        problems, checked = kit_flag_problems(kit)
    except HostError as exc:
        pytest.skip(f"sglang 0.5.9's wheel: {exc}")
    assert problems == []
    assert checked == ["step 'serve': 9 server flags against sglang 0.5.9 sglang/srt/server_args.py, 9 benchmark"
                       " flags against sglang 0.5.9 sglang/bench_serving.py"]
    broken = kit.model_copy(update={"steps": [s.model_copy(update={"with_": {**s.with_, "extra_args": ["--enable-ep-moe"],
                                                                            "quantization": "nvfp4"}})
                                              if s.uses == "serve" else s for s in kit.steps]})
    assert kit_flag_problems(broken)[0] == [
        "step 'serve': sglang.launch_server --quantization 'nvfp4' is not one of sglang 0.5.9"
        " sglang/srt/server_args.py's choices: " + ", ".join(
            ["awq", "fp8", "mxfp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf", "modelopt",
             "modelopt_fp8", "modelopt_fp4", "petit_nvfp4", "w8a8_int8", "w8a8_fp8", "moe_wna16", "qoq", "w4afp8",
             "mxfp4", "auto-round", "compressed-tensors", "modelslim", "quark_int4fp8_moe"]),
        "step 'serve': sglang.launch_server --enable-ep-moe is not an option of sglang 0.5.9 sglang/srt/server_args.py"]


def test_invoke_kits_check_reads_the_pinned_wheel(tmp_path):
    from tests.conftest import run_invoke

    proc = run_invoke("kits", "--check", "--kits-dir", str(KITS))
    if "cannot read sglang" in proc.stderr:
        pytest.skip(f"sglang 0.5.9's wheel: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert f"{KITS}/ep8-crash.yml: sglang flags agree with the pinned release (step 'serve': 9 server flags" in proc.stdout
    bad = tmp_path / "kits"
    bad.mkdir()
    (bad / "models").symlink_to(KITS / "models")
    (bad / "ep8-crash.yml").write_text((KITS / "ep8-crash.yml").read_text().replace(
        "      quantization: modelopt_fp4\n", "      quantization: modelopt_fp4\n      extra_args: [--enable-ep-moe]\n"))
    proc = run_invoke("kits", "--check", "--kits-dir", str(bad))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert not [line for line in lines if line.startswith("kits/ep8-crash.yml")]  # the -K layer's replaces the project's
    assert [line for line in lines if line.startswith(f"{bad}/")] == [
        f"{bad}/ep8-crash.yml: step 'serve': sglang.launch_server --enable-ep-moe is not an option of sglang 0.5.9"
        " sglang/srt/server_args.py; change the kit's `with:` to a flag that release has"]


def test_a_wheel_on_neither_machine_is_one_line_saying_which_file_to_put_where(tmp_path, monkeypatch):
    from reprokit.workloads.contract import Exit, WorkloadError
    from reprokit.workloads.static_smem import wheel as wheels

    monkeypatch.setenv("PIP_NO_INDEX", "1")  # an offline host: pip finds nothing
    with pytest.raises(WorkloadError) as caught:
        wheels.fetch("0.6.3", tmp_path / "host-cache")
    assert caught.value.code == Exit.MISSING_DEPENDENCY
    assert str(caught.value) == (
        "flashinfer-python==0.6.3: no such wheel on the package index (pip download found no matching distribution);"
        f" offline, put {WHEEL} in {tmp_path / 'host-cache' / 'wheels'} on this host, or in the control machine's"
        " cache (~/.cache/reprokit/wheels), which stages it here")


def test_a_gpu_step_on_a_host_without_a_gpu_is_planned_out_with_the_fingerprints_reason():
    """Whatever the inventory declares (gpu_arch, gpu_count), the fingerprint decides: every host is treated alike."""
    kit = load_kit_file(KITS / "tile-sweep.yml")
    sweep = next(s for s in kit.steps if s.uses == "tile-sweep")
    host = replace(local_host(), gpu_arch="sm120", gpu_count=1)
    no_gpu = Fingerprint.from_json({"gpu_status": "no_driver", "devices": [],
                                    "gpu_reason": "no NVIDIA driver on this host (libcuda.so.1 not found)"}, "test")
    planned = plan_step(sweep, kit, KITS, no_gpu, {}, host=host)
    assert planned.skip_reason == "not run: needs a CUDA GPU; no NVIDIA driver on this host (libcuda.so.1 not found)"
