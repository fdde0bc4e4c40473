"""The step kinds a kit can use, defined once.

A step kind says where it runs (``host``: a workload module executed on the
GPU host, natively or in the kit's container; ``control``: a function of the
control plane run on pulled-back artifacts), which pins it needs, whether it
needs a CUDA device, and whether this version of reprokit implements it yet.
A kit may declare steps that are not implemented yet: the run reports them
as not run, and the expectations on them as INCONCLUSIVE, with the reason.

A kind also declares what it consumes (``inputs``): files of an earlier
step's output or of the control machine's cache. The planner resolves them
on the control machine, the executor stages them on the host (sha256
verified) and hands the workload their host-side paths; a missing input is
a reason not to run, naming it. ``host_paths`` are parameters naming paths
that must already exist on the host (the model), checked before the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class StepInput:
    """A file a step consumes; its host-side path reaches the workload as parameter ``param``.

    ``from_step``: the kind of an earlier step whose output it is (``files``: globs inside that step's
    directory); the kit's last earlier step of that kind produces it, or the one parameter ``step_param``
    names. ``from_control``: an artifact of the control machine's cache (``reprokit/plan/inputs.py`` says
    which). ``optional``: a kit without a producing step runs the step without it.
    """

    param: str
    summary: str
    from_step: str | None = None
    files: tuple[str, ...] = ("result.json",)  # globs inside the producing step's directory
    step_param: str | None = None
    from_control: str | None = None
    optional: bool = False


@dataclass(frozen=True)
class HostPath:
    """A parameter that names a path on the host which must exist before the step starts."""

    param: str
    variable: str  # the inventory variable that points the host at it
    absolute_only: bool = True  # a value without a leading "/" is not a host path (e.g. a hub id)


@dataclass(frozen=True)
class StepKind:
    name: str
    where: Literal["host", "control"]
    summary: str
    module: str | None = None  # workload module run as `python -m <module>` on the host
    needs_gpu: bool = False
    needs_pins: tuple[str, ...] = ()
    implemented: bool = False
    not_implemented_reason: str = ""
    default_timeout_s: int = 600
    param_keys: tuple[str, ...] = field(default=())  # accepted keys of the step's `with:`
    inputs: tuple[StepInput, ...] = ()
    host_paths: tuple[HostPath, ...] = ()
    # The top-level keys of the step's result.json beyond the contract's (workload, schema_version, status,
    # error): what `invoke kits --check` holds an expectation's path to. Empty: not declared, not checked.
    result_keys: tuple[str, ...] = ()


STEP_KINDS: dict[str, StepKind] = {
    kind.name: kind
    for kind in (
        StepKind(
            name="smem-probe",
            where="host",
            module="reprokit.workloads.smem_probe",
            summary="shared-memory limits from torch and the CUDA driver; kernel launches at the opt-in limit and one byte past it",
            needs_gpu=False,  # it reports 'no CUDA device' itself, with its own exit code
            needs_pins=("torch", "cuda"),
            implemented=True,
            default_timeout_s=180,
            param_keys=("device_indices",),
            result_keys=("host", "driver", "device_count", "devices"),
        ),
        StepKind(
            name="static-smem",
            where="host",
            module="reprokit.workloads.static_smem",
            summary="shared memory of FlashInfer's SM120 CUTLASS MoE kernels, computed with nvcc and no GPU",
            needs_pins=("flashinfer-python",),
            implemented=True,
            default_timeout_s=900,
            param_keys=("arch", "flashinfer", "variants", "dtype", "output_dtypes", "jobs", "optin_limit_bytes"),
            inputs=(StepInput("wheel", "the pinned flashinfer-python wheel", from_control="flashinfer-wheel"),),
            result_keys=("flashinfer", "arch", "dtype", "output_dtypes", "capacity_bytes", "capacity_symbol",
                         "optin_limit_bytes", "optin_source", "failing_tiles", "fitting_tiles", "unsupported_tiles",
                         "failing_tactics", "failing_tactics_optin", "tactic_counts", "tactic_indexing", "candidates",
                         "rows", "sources", "notes", "cache", "elapsed_s", "artifacts"),
        ),
        StepKind(
            name="tile-sweep",
            where="host",
            module="reprokit.workloads.sweep",
            summary="runtime tile sweep of the MoE GEMM shapes on the GPU, cross-checked against the prediction",
            needs_gpu=True,
            needs_pins=("torch",),
            implemented=True,
            default_timeout_s=900,
            param_keys=("model", "parallelism", "tokens_per_expert", "backends", "time_budget_s", "tile_configs"),
            inputs=(StepInput("predicted", "the static prediction (static-smem's result.json)", from_step="static-smem",
                              optional=True),),
            result_keys=("model", "model_config", "params", "device", "versions", "problems", "roofline", "backends",
                         "configs", "rows", "cross_check", "best", "headline", "notes", "timing"),
        ),
        StepKind(
            name="triton-moe-configs",
            where="host",
            module="reprokit.workloads.triton_moe",
            summary="sglang's default and tuned Triton fused-MoE configurations sized per arch (formula and Triton"
                    " compile); the tuned files refit to SM120",
            needs_pins=("sglang",),
            implemented=True,
            default_timeout_s=1800,
            param_keys=("sglang", "archs", "config_dirs", "compile", "from_device", "device_name", "hidden_size",
                        "top_k", "jobs", "emit_arch"),
            inputs=(StepInput("wheel", "the pinned sglang wheel", from_control="sglang-wheel"),),
            result_keys=("sglang", "wheel", "wheel_sha256", "triton", "compiled", "archs", "limits_bytes", "defaults",
                         "defaults_overflowing", "tuned", "formula", "emitted", "emitted_all_fit"),
        ),
        StepKind(
            name="triton-smem",
            where="host",
            module="reprokit.workloads.triton_smem",
            summary="shared memory of a @triton.jit kernel of a pinned wheel, compiled for each arch as its launch"
                    " specialises it (no GPU of that arch needed)",
            implemented=True,
            default_timeout_s=900,
            param_keys=("package", "version", "source", "kernel", "archs", "args", "cases", "jobs"),
            inputs=(StepInput("wheel", "the wheel the kernel comes from", from_control="package-wheel"),),
            result_keys=("package", "version", "wheel", "wheel_sha256", "source", "kernel", "triton", "archs",
                         "limits_bytes", "cases", "by_case", "overflowing"),
        ),
        StepKind(
            name="serve",
            where="host",
            module="reprokit.workloads.serve",
            summary="sglang server launched with the kit's flags, watched until ready, fatal or timeout",
            needs_gpu=True,
            needs_pins=("sglang", "flashinfer-python", "torch"),
            implemented=True,
            default_timeout_s=3600,
            param_keys=(
                "model", "tp", "ep", "moe_runner_backend", "quantization", "mem_fraction_static",
                "max_running_requests", "load_format", "env", "extra_args", "ready_timeout_s", "port", "bench",
                "smoke_prompt", "telemetry_interval_s",
            ),
            host_paths=(HostPath("model", variable="models_dir"),),
            result_keys=("command", "env", "outcome", "ready", "ready_after_s", "waited_s", "server_exit_code_before_stop",
                         "server_exit_code", "smoke", "answers", "bench", "telemetry", "performance", "duration_s",
                         "server_log", "fatal_line"),
        ),
        StepKind(
            name="triage",
            where="control",
            summary="parse the pulled-back server logs: autotune failures, readiness, fatal errors, verdict",
            implemented=True,
            default_timeout_s=600,
            param_keys=("logs_from", "flashinfer"),
            inputs=(StepInput("logs", "the server logs of serve", from_step="serve",
                              files=("**/*.log", "**/*.log.gz"),
                              step_param="logs_from"),),
            result_keys=("logs", "schema", "verdict", "exit_code", "reason", "evidence", "phase", "versions",
                         "versions_seen", "arch", "archs", "ranks", "hint", "env", "ready", "autotune_failure_tiles",
                         "autotune_failures", "notes", "autotune_skipped_summaries", "fatal", "errors", "timeline",
                         "counts", "flashinfer", "files"),
        ),
    )
}
