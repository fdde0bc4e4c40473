"""The manifest's ``fingerprint``: the fingerprint workload's result, typed where reprokit reads it.

The runner, the planner, the judge and the reports read its fields; a field of the wrong type is one line naming
its path (``runs/x/manifest.json: fingerprint.devices[1].gpu_arch: expected a string, got 7``). The workload's
output varies across its versions and hosts (a host without a driver writes ``devices`` before ``driver``, older
records have no ``python_executable`` nor ``uuid``), so every key it wrote is kept, modelled or not, and written
back in the order it was read: a record read and written again is the same bytes.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reprokit.errors import ConfigError
from reprokit.records.fields import Fields

_BOOKKEEPING = ("keys", "other")


@dataclass
class _Kept:
    """A JSON object whose declared fields are typed; ``keys``: its keys in the order read (None: built here, the
    declared fields that are set); ``other``: the keys it has beyond the declared ones, as written."""

    TYPES: ClassVar[dict[str, tuple[type, ...]]] = {}  # each declared field's JSON types, from its annotation
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        hints = typing.get_type_hints(cls)
        cls.TYPES = {name: _json_types(hint) for name, hint in hints.items()
                     if name not in _BOOKKEEPING and ClassVar not in (hint, typing.get_origin(hint))}

    @classmethod
    def _read(cls, fields: Fields, **typed: Any) -> Any:
        """The object from ``fields``; ``typed``: the declared fields the caller read into models itself."""
        values = {name: fields.take(name, *json_types, required=name in cls.REQUIRED) for name, json_types in cls.TYPES.items()
                  if name not in typed and (name in fields.data or name in cls.REQUIRED)}
        values.update((name, value) for name, value in typed.items() if name in fields.data)
        other = {key: value for key, value in fields.data.items() if key not in cls.TYPES}
        return cls(**values, keys=tuple(fields.data), other=other)

    def written(self, name: str) -> bool:
        """Whether the object has the key ``name`` (read back: as written; built here: when set)."""
        return name in self.keys if self.keys is not None else getattr(self, name, None) is not None

    def to_json(self) -> dict[str, Any]:
        names = self.keys if self.keys is not None else [n for n in self.TYPES if getattr(self, n) is not None]
        return {name: self.other[name] if name in self.other else _plain(getattr(self, name)) for name in names}


def _json_types(hint: Any) -> tuple[type, ...]:
    """The JSON types of a field annotated ``hint`` (``int | None``: an integer or null; a model: an object)."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return tuple(dict if isinstance(t, type) and issubclass(t, _Kept) else typing.get_origin(t) or t for t in options)


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value.to_json() if isinstance(value, _Kept) else value


@dataclass
class HostFacts(_Kept):
    """The host as the workload saw it (inside its container, when it ran in one)."""

    hostname: str | None = None
    kernel: str | None = None
    machine: str | None = None
    python: str | None = None
    in_container: bool | None = None
    keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    other: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Driver(_Kept):
    """The NVIDIA driver: its release and the CUDA driver API version it offers."""

    driver_release: str | None = None
    cuda_driver_api: str | None = None
    cuda_driver_api_int: int | None = None
    libcuda: str | None = None
    keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    other: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Device(_Kept):
    """A GPU as the driver reports it (no launches); an attribute the driver could not give is null."""

    REQUIRED: ClassVar = ("gpu_arch",)  # what the planner and the judge decide by
    gpu_arch: str = ""
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    compute_capability: str | None = None
    multiprocessor_count: int | None = None
    max_shared_memory_per_block_bytes: int | None = None
    max_shared_memory_per_multiprocessor_bytes: int | None = None
    max_shared_memory_per_block_optin_bytes: int | None = None
    reserved_shared_memory_per_block_bytes: int | None = None
    keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    other: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Fingerprint(_Kept):
    """The environment a run ran in: host, packages, nvcc, driver, GPUs; or, with no GPU, why not (``gpu_reason``)."""

    schema_version: int | None = None
    status: str | None = None
    host: HostFacts | None = None
    python_executable: str | None = None
    packages: dict[str, str | None] = field(default_factory=dict)  # the pinned packages' versions; null: not installed
    nvcc: str | None = None
    driver: Driver | None = None
    devices: list[Device] = field(default_factory=list)
    gpu_status: str | None = None
    gpu_reason: str | None = None
    keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    other: dict[str, Any] = field(default_factory=dict, repr=False)

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
        fields = Fields(data, where, prefix)
        for key, json_types in cls.TYPES.items():
            fields.take(key, *json_types)
        packages = fields.data.get("packages") or {}
        for name, version in packages.items():
            if not isinstance(version, (str, type(None))):
                fields.fail(f"packages.{name}", "a string or null", version)
        typed: dict[str, Any] = {
            "host": HostFacts._read(fields.child("host")) if fields.data.get("host") is not None else None,
            "driver": Driver._read(fields.child("driver")) if fields.data.get("driver") is not None else None,
            "devices": [Device._read(Fields(d, where, f"{fields.path('devices')}[{i}]"))
                        for i, d in enumerate(fields.data.get("devices") or [])]}
        return cls._read(fields, **typed)

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

