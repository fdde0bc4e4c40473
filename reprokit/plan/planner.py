"""Resolve a kit's steps for one host: parameters, defaults, and what cannot run there.

Parameters come from the step's ``with:``, completed from facts the kit and
the run already hold, as the step's kind declares (``reprokit/step_kinds/``):
the kit's pins (``pin_params``, e.g. the FlashInfer version), the model's
numbers from ``kits/models/<model>.yml`` (``model_config_param``), and the
host's probed architecture and shared-memory limit from the fingerprint
(``host_arch_param``, ``optin_limit_param``), and its GPU count (``gpu_count_param``: the devices the
fingerprint sees, which must equal the inventory's ``gpu_count`` where it gives one). Nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host
from reprokit.config.kit import Kit, Step
from reprokit.config.layers import KitPath, kit_path
from reprokit.config.yamlfile import load_yaml
from reprokit.errors import ConfigError
from reprokit.records.fingerprint import Fingerprint
from reprokit.step_kinds import STEP_KINDS, StepKind


@dataclass
class PlannedStep:
    step: Step
    kind: StepKind
    params: dict[str, Any] = field(default_factory=dict)
    skip_reason: str | None = None  # set when the step cannot run on this host
    host_paths: list[tuple[str, str, str]] = field(default_factory=list)  # (param, host path, inventory variable)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # what was staged for it (the manifest's record)

    @property
    def name(self) -> str:
        return self.step.name


def load_model_config(name: str, kits_dir: KitPath | Path) -> dict[str, Any]:
    """``models/<name>.yml`` of the kits' directory, or of their last layer that has it."""
    kits = kit_path(kits_dir)
    known = kits.model_files()
    path = known.get(name)
    if path is None:
        raise ConfigError(f"{kits.models_dir() / f'{name}.yml'}: unknown model '{name}'; known models: {', '.join(known) or '(none)'}")
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{path}:1: a model file must be a mapping of config names to numbers")
    return doc.data


def plan_step(step: Step, kit: Kit, kits_dir: KitPath | Path, fingerprint: Fingerprint, results: dict[str, Any],
              host: Host | None = None) -> PlannedStep:
    """A step that needs a GPU is planned out on a host whose fingerprint found none, with the fingerprint's reason.

    ``host``: where the step runs; a bare name in a host path parameter (``model: GLM-5-NVFP4``) is taken
    inside the host's directory for it (``models_dir``). Inputs are resolved and staged by the runner.
    """
    kind = STEP_KINDS[step.uses]
    planned = PlannedStep(step=step, kind=kind, params=dict(step.with_))
    if not kind.implemented:
        planned.skip_reason = f"not run: {kind.not_implemented_reason}"
        return planned
    devices = fingerprint.devices
    if kind.needs_gpu and not devices:
        planned.skip_reason = f"not run: needs a CUDA GPU; {fingerprint.gpu_reason or 'none found'}"
        return planned
    params = planned.params
    for fill in kind.pin_params:
        pin = fill.pin or params.get(fill.pin_named_by or "")
        if fill.param not in params and isinstance(pin, str) and pin in kit.pins:
            params[fill.param] = kit.pins[pin]
    model = params.get(kind.model_config_param) if kind.model_config_param else None
    if isinstance(model, str) and not model.startswith("/"):
        params["model_config"] = load_model_config(model, kits_dir)
    arch_param = kind.host_arch_param
    if arch_param and params.get(arch_param) == "host":
        arches = fingerprint.gpu_arches
        if len(arches) != 1:
            planned.skip_reason = (
                f"not run: {arch_param} 'host' needs one GPU architecture on the host; "
                + (f"found {arches}" if arches else (fingerprint.gpu_reason or "no GPU found"))
            )
            return planned
        params[arch_param] = arches[0]
    if kind.optin_limit_param and arch_param and devices:
        limits = {d.max_shared_memory_per_block_optin_bytes for d in devices if d.gpu_arch == params.get(arch_param)}
        if len(limits) == 1:
            params[kind.optin_limit_param] = limits.pop()
    if kind.gpu_count_param and params.get(kind.gpu_count_param, "host") == "host":
        count = len(devices)
        if host is not None and host.gpu_count is not None and host.gpu_count != count:
            planned.skip_reason = (f"not run: {kind.gpu_count_param} 'host': the inventory says {host.gpu_count} GPU(s)"
                                   f" on {host.name}, the workloads see {count}; fix gpu_count or the host's"
                                   " CUDA_VISIBLE_DEVICES")
            return planned
        params[kind.gpu_count_param] = count
    for spec in kind.host_paths:
        value = params.get(spec.param)
        if isinstance(value, str) and value and host is not None and "/" not in value:
            params[spec.param] = value = f"{getattr(host, spec.variable).rstrip('/')}/{value}"
        if isinstance(value, str) and value.startswith("/"):
            planned.host_paths.append((spec.param, value, spec.variable))
    return planned
