"""The manifest's ``fingerprint``: the fingerprint workload's result, typed where reprokit reads it.

The runner, the planner, the judge and the reports read its fields; a field of the wrong type is one line naming
its path (``runs/x/manifest.json: fingerprint.devices[1].gpu_arch: expected a string, got 7``). The workload's
output varies across its versions and hosts (a host without a driver writes ``devices`` before ``driver``, older
records have no ``python_executable`` nor ``uuid``), so every key it wrote is kept, modelled or not, and written
back in the order it was read: a record read and written again is the same bytes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
from pydantic import StrictBool, StrictInt, StrictStr
from pydantic.dataclasses import dataclass

from reprokit.errors import ConfigError
from reprokit.records.typed import Record

_BOOKKEEPING = ("keys", "other")


@dataclass(kw_only=True)
class _Kept(Record):
    """A JSON object whose declared fields are typed; ``keys``: its keys in the order read (None: built here, the
    declared fields that are set); ``other``: the keys it has beyond the declared ones, as written."""

    keys: tuple[str, ...] | None = dataclasses.field(default=None, repr=False, compare=False)
    other: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _keep_every_key(cls, data: Any) -> Any:
        """A file's object (a dict; code builds by arguments) keeps its keys' order and the keys not modelled."""
        if not isinstance(data, dict):
            return data
        declared = [name for name in cls.__pydantic_fields__ if name not in _BOOKKEEPING]
        return {**{key: value for key, value in data.items() if key in declared}, "keys": tuple(data),
                "other": {key: value for key, value in data.items() if key not in declared}}

    def written(self, name: str) -> bool:
        """Whether the object has the key ``name`` (read back: as written; built here: when set)."""
        return name in self.keys if self.keys is not None else getattr(self, name, None) is not None

    def to_json(self) -> dict[str, Any]:
        names = self.keys if self.keys is not None else [name for name in self.__pydantic_fields__
                                                         if name not in _BOOKKEEPING and getattr(self, name) is not None]
        return {name: self.other[name] if name in self.other else self.json_of(name) for name in names}


@dataclass(kw_only=True)
class HostFacts(_Kept):
    """The host as the workload saw it (inside its container, when it ran in one)."""

    hostname: StrictStr | None = None
    kernel: StrictStr | None = None
    machine: StrictStr | None = None
    python: StrictStr | None = None
    in_container: StrictBool | None = None


@dataclass(kw_only=True)
class Driver(_Kept):
    """The NVIDIA driver: its release and the CUDA driver API version it offers."""

    driver_release: StrictStr | None = None
    cuda_driver_api: StrictStr | None = None
    cuda_driver_api_int: StrictInt | None = None
    libcuda: StrictStr | None = None


@dataclass(kw_only=True)
class Device(_Kept):
    """A GPU as the driver reports it (no launches); an attribute the driver could not give is null."""

    gpu_arch: StrictStr  # what the planner and the judge decide by
    index: StrictInt | None = None
    name: StrictStr | None = None
    uuid: StrictStr | None = None
    compute_capability: StrictStr | None = None
    multiprocessor_count: StrictInt | None = None
    max_shared_memory_per_block_bytes: StrictInt | None = None
    max_shared_memory_per_multiprocessor_bytes: StrictInt | None = None
    max_shared_memory_per_block_optin_bytes: StrictInt | None = None
    reserved_shared_memory_per_block_bytes: StrictInt | None = None


@dataclass(kw_only=True)
class Fingerprint(_Kept):
    """The environment a run ran in: host, packages, nvcc, driver, GPUs; or, with no GPU, why not (``gpu_reason``)."""

    schema_version: StrictInt | None = None
    status: StrictStr | None = None
    host: HostFacts | None = None
    python_executable: StrictStr | None = None
    packages: dict[str, StrictStr | None] = dataclasses.field(default_factory=dict)  # the pinned packages' versions; null: not installed
    nvcc: StrictStr | None = None
    driver: Driver | None = None
    devices: list[Device] = dataclasses.field(default_factory=list)
    gpu_status: StrictStr | None = None
    gpu_reason: StrictStr | None = None

    @property
    def gpu_arches(self) -> list[str]:
        """The architectures of the host's GPUs, sorted, each once."""
        return sorted({d.gpu_arch for d in self.devices if d.gpu_arch})

    @property
    def installed(self) -> dict[str, str]:
        """The pinned packages that are installed, with their versions."""
        return {name: version for name, version in self.packages.items() if version}

    @classmethod
    def from_json(cls, data: Any, where: str, prefix: str = "fingerprint") -> Fingerprint:
        return super().from_json(data, where, prefix)

    @classmethod
    def of_workload(cls, result: dict[str, Any] | None, problem: str | None, where: str) -> Fingerprint:
        """The fingerprint step's result (``where``) as the manifest keeps it, without the contract's ``workload``.

        No result, or one that does not match the model, is a fingerprint of no GPU that says why: the steps that
        need a GPU are then not run, with that reason.
        """
        if result is not None:
            try:
                return cls.from_json({k: v for k, v in result.items() if k != "workload"}, where, prefix="")
            except ConfigError as exc:
                problem = str(exc)
        return cls.from_json({"gpu_status": "unknown", "gpu_reason": problem, "devices": []}, where)
