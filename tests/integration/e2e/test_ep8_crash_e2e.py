"""`invoke repro ep8-crash --host <test host>` end to end: real SSH, real Docker, real workloads, the real triage,
judgement and report; only the sglang server (and nvidia-smi) is a test double (tests/doubles/sglang-server),
whose flags are sglang 0.5.9's own, read from its wheel.

The host has a model directory and a cache directory (inventory `models_dir`, `cache_dir`); the kit runs twice
on it, so the second run shows what the first left in the cache.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reprokit.errors import ExitCode, HostError
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.upstream.args import BENCH_SERVING, SERVER_ARGS, SGLANG, upstream_options, wheel_path
from tests.conftest import REPO
from tests.doubles.option_tables import write_sglang_tables
from tests.integration.remote.conftest import host_workdir, known_hosts_for, write_inventory
from tests.integration.remote.test_remote_docker import BASE, containers_of
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON
from tests.integration.remote.test_remote_runs import invoke_repro, runs_in

pytestmark = pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")
DOUBLE = "reprokit-test/sglang-double:2"
GLM5_CONFIG = {"architectures": ["GlmMoeDsaForCausalLM"], "hidden_size": 6144, "moe_intermediate_size": 2048,
               "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "num_hidden_layers": 78}
WHEEL = "flashinfer_python-0.6.3-py3-none-any.whl"
FATAL_EXCERPT = "sglang-12306-scheduler-exception-in-flashinfer-autotune.log"  # REPROKIT_DOUBLE_FATAL=autotune


@pytest.fixture(scope="module")
def serve_double(tmp_path_factory):
    ctx = tmp_path_factory.mktemp("double")
    shutil.copytree(REPO / "tests" / "doubles" / "sglang-server", ctx, dirs_exist_ok=True)
    shutil.copy(REPO / "tests" / "fixtures" / "logs" / "sglang-ep8-0.6.3-ready-autotune-failures.log.gz", ctx / "server-log.gz")
    shutil.copy(REPO / "tests" / "fixtures" / "real" / FATAL_EXCERPT, ctx / "fatal.log")
    try:
        tables = {"server_args": upstream_options(SGLANG, "0.5.9", SERVER_ARGS),
                  "bench_serving": upstream_options(SGLANG, "0.5.9", BENCH_SERVING)}
    except HostError as exc:
        pytest.skip(f"sglang 0.5.9's option tables: {exc}")
    write_sglang_tables(tables, ctx / "options.json", wheel_path(SGLANG, "0.5.9"))
    subprocess.run(["docker", "build", "-q", "--build-arg", f"BASE_IMAGE={BASE}", "-t", DOUBLE, str(ctx)],
                   check=True, capture_output=True)
    return DOUBLE


def host_with_model(tmp_path: Path, tag: str, with_model: bool = True, gpu: bool = True) -> tuple[Path, Path, Path]:
    """h1 with the model directory (or without it), as a GPU host (the libcuda double) or, ``gpu=False``, a GPU-less one."""
    work = host_workdir("h1", tag)
    models = work / "models"
    (models / "GLM-5-NVFP4").mkdir(parents=True)
    if with_model:
        (models / "GLM-5-NVFP4" / "config.json").write_text(json.dumps(GLM5_CONFIG))
    else:
        shutil.rmtree(models / "GLM-5-NVFP4")
    subprocess.run(["chown", "-R", "rkuser:rkuser", str(models)], check=True)
    inventory = write_inventory(tmp_path / "inv.yml", {"h1": {
        "workdir": work, "runtime": "docker", "container_ulimits": "{}", "gpu_arch": "sm120",
        "models_dir": models, "cache_dir": work / "cache"}}, gpu=gpu)
    return work, inventory, known_hosts_for(tmp_path / "known_hosts", "h1")


def repro(tmp_path: Path, inventory: Path, known: Path, serve_image: str):
    return invoke_repro(tmp_path, inventory, known, "--host", "h1", "--image", f"workload={BASE}",
                        "--image", f"serve={serve_image}", "--json", "--quiet", kit="ep8-crash")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, serve_double):
    """ep8-crash twice on one host: same model directory, same cache directory."""
    tmp = tmp_path_factory.mktemp("e2e")
    work, inventory, known = host_with_model(tmp, "e2e")
    first = repro(tmp, inventory, known, serve_double)
    (first_dir,) = runs_in(tmp / "runs")
    second = repro(tmp, inventory, known, serve_double)
    second_dir = next(d for d in runs_in(tmp / "runs") if d != first_dir)
    return work, (first, first_dir), (second, second_dir)


def steps_of(run_dir: Path) -> dict[str, dict]:
    return {s["name"]: s for s in load_manifest(run_dir).to_json()["steps"]}


def test_ep8_crash_against_the_serve_double(two_runs):
    work, (proc, run_dir), _ = two_runs
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete", manifest.get("status_detail")
    steps = steps_of(run_dir)
    # every step is ok or not run for a reason named here
    assert {name: s["status"] for name, s in steps.items()} == {
        "probe": "ok", "static-smem": "missing_dependency", "sweep": "not_run", "serve": "ok", "triage": "ok"}
    # the probe ran in the workload image with --gpus all: the GPU is the libcuda double the hook put there
    probe = json.loads((run_dir / "steps" / "probe" / "result.json").read_text())
    assert [(d["driver"]["gpu_arch"], d["launch_past_optin_limit"]["error_name"]) for d in probe["devices"]] == [
        ("sm120", "CUDA_ERROR_INVALID_VALUE")]
    assert steps["static-smem"]["reason"].startswith("nvcc not found")
    assert steps["sweep"]["reason"] == (
        "not run: input 'predicted' (the static prediction (static-smem's result.json)) is missing: step 'static-smem'"
        f" did not produce it (missing_dependency: {steps['static-smem']['reason']})")
    # the wheel came from the control machine's cache into the host's cache, verified, seen at the same path
    (staged,) = steps["static-smem"]["inputs"]
    assert staged["origin"] == f"control cache: {WHEEL}" and staged["param"] == "wheel"
    assert staged["host_path"] == f"{work}/cache/reprokit/inputs/{staged['sha256'][:16]}/{WHEEL}"
    params = json.loads((run_dir / "steps" / "static-smem" / "params.json").read_text())
    assert params["wheel"] == staged["host_path"]
    assert Path(staged["host_path"]).stat().st_size == staged["bytes"]
    # the container saw the host's model directory: the double read the model's config.json from it
    serve = json.loads((run_dir / "steps" / "serve" / "result.json").read_text())
    model = f"{work}/models/GLM-5-NVFP4"
    assert serve["command"][1:5] == ["-m", "sglang.launch_server", "--model-path", model]
    server_log = (run_dir / "steps" / "serve" / "server.log").read_text()
    assert f"[double] model config {model}/config.json: architectures ['GlmMoeDsaForCausalLM'], 78 layers" in server_log
    assert serve["ready"] is True and serve["outcome"] == "ready"
    assert serve["smoke"]["ok"] is True and serve["smoke"]["http_status"] == 200
    assert [row["concurrency"] for row in serve["bench"]] == [1, 8, 32]
    assert [row["exit_code"] for row in serve["bench"]] == [0, 0, 0]
    assert [row["completed"] for row in serve["bench"]] == [4, 32, 128]
    assert serve["telemetry"]["available"] is True
    assert [g["max_power_w"] for g in serve["telemetry"]["per_gpu"]] == [235.5] * 8
    # the pulled-back server log, triaged by the real parser, staged as the triage's declared input
    serve_logs = sorted(p.name for p in (run_dir / "steps" / "serve").glob("*.log"))
    assert {"server.log", "step.log", "bench-c1.log", "bench-c8.log", "bench-c32.log"} <= set(serve_logs)
    assert [i["origin"] for i in steps["triage"]["inputs"]] == [f"step serve: {name}" for name in serve_logs]
    triage = json.loads((run_dir / "steps" / "triage" / "result.json").read_text())
    assert "steps/serve/server.log" in triage["logs"]
    assert triage["verdict"] == "READY_WITH_NONFATAL_AUTOTUNE_FAILURES"
    assert triage["autotune_failure_tiles"] == ["128x256x128", "256x128x128"]
    assert triage["autotune_failure_tactics"] == [14, 15]  # FlashInfer 0.6.3's gemm2 FINALIZE kernels on SM120
    assert sum(row["count"] for row in triage["autotune_failures"]) == 32
    verdict = json.loads((run_dir / "verdict.json").read_text())
    status = {j["name"]: j["status"] for j in verdict["expectations"]}
    assert status == {"sm120-optin-limit": "PASS", "big-tiles-overflow-sm120": "INCONCLUSIVE",
                      "small-tiles-fit-sm120": "INCONCLUSIVE", "server-came-up": "PASS", "smoke-request-answered": "PASS",
                      "autotuning-ran": "PASS", "server-ready-despite-autotune-failures": "PASS",
                      "failures-are-the-big-tiles": "PASS", "triage-agrees-with-static-analysis": "INCONCLUSIVE",
                      "gpu-power-at-c32": "PASS"}  # static-smem: no nvcc here, so nothing to reconcile with
    assert verdict["verdict"] == "INCONCLUSIVE"
    assert (run_dir / "report.md").read_text().startswith("# ep8-crash on h1: can't tell here (INCONCLUSIVE)")
    assert verify_record(run_dir) == []
    assert containers_of(manifest["run_id"]) == []
    assert list((work / "runs").iterdir()) == []


def test_a_cache_written_in_one_run_is_read_by_the_next(two_runs):
    work, (_, first_dir), (proc, second_dir) = two_runs
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    first_log = (first_dir / "steps" / "static-smem" / "step.log").read_text()
    second_log = (second_dir / "steps" / "static-smem" / "step.log").read_text()
    wheel_sha = steps_of(first_dir)["static-smem"]["inputs"][0]["sha256"]
    root = f"{work}/cache/reprokit/static_smem/src/{wheel_sha[:16]}"
    # the first run's container extracted the wheel into the host's cache; the second's read it from there
    assert f"static-smem: extracting the sources of {WHEEL} into the cache {root}" in first_log
    assert f"static-smem: sources of {WHEEL} from the cache {root}" in second_log
    assert "extracting" not in second_log
    assert Path(root, ".complete").read_text() == wheel_sha + "\n"
    assert steps_of(second_dir)["static-smem"]["inputs"] == steps_of(first_dir)["static-smem"]["inputs"]


def test_serve_is_not_run_without_the_model_on_the_host(tmp_path, serve_double):
    work, inventory, known = host_with_model(tmp_path, "e2e-nomodel", with_model=False)
    proc = repro(tmp_path, inventory, known, serve_double)
    assert proc.returncode == ExitCode.INCONCLUSIVE, proc.stderr
    (run_dir,) = runs_in(tmp_path / "runs")
    steps = steps_of(run_dir)
    assert steps["serve"]["status"] == "not_run"
    assert steps["serve"]["reason"] == (
        f"not run: model {work}/models/GLM-5-NVFP4 is not on host 'h1'; put it there, or set `models_dir` for the"
        f" host in inventory.yml (now {work}/models) to the directory that holds GLM-5-NVFP4")
    assert steps["triage"]["status"] == "not_run"
    assert steps["triage"]["reason"] == (
        f"not run: input 'logs' (the server logs of serve) is missing: step 'serve' did not produce it"
        f" ({steps['serve']['reason']})")


def test_the_double_refuses_what_sglang_059_refuses(serve_double, tmp_path):
    def run(*argv):
        return subprocess.run(["docker", "run", "--rm", "--network", "none", serve_double, "python3", "-m", *argv],
                              capture_output=True, text=True, timeout=60)

    bad_flag = run("sglang.launch_server", "--model-path", "/m", "--enable-ep-moe")
    assert bad_flag.returncode == 2
    assert bad_flag.stderr.splitlines()[-1] == "launch_server.py: error: unrecognized arguments: --enable-ep-moe"
    bad_choice = run("sglang.launch_server", "--model-path", "/m", "--quantization", "nvfp4")
    assert bad_choice.returncode == 2 and "argument --quantization: invalid choice: 'nvfp4'" in bad_choice.stderr
    no_model = run("sglang.launch_server", "--model-path", "/models/absent", "--tp-size", "8")
    assert no_model.returncode == 1 and "OSError: Can't load the configuration of '/models/absent'" in no_model.stdout
    offline = run("sglang.bench_serving", "--backend", "sglang", "--dataset-name", "random", "--num-prompts", "4",
                  "--random-input-len", "8", "--random-output-len", "8", "--port", "1", "--max-concurrency", "1")
    assert offline.returncode == 1
    assert offline.stdout.splitlines()[-1] == (
        "huggingface_hub.errors.LocalEntryNotFoundError: anon8231489123/ShareGPT_Vicuna_unfiltered/"
        "ShareGPT_V3_unfiltered_cleaned_split.json: dataset 'random' without --dataset-path needs a download from"
        " Hugging Face, and this host is offline")
