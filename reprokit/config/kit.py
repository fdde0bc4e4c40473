"""Kits: what a reproduction runs, with which pins, and what it expects. Data, validated.

A kit is one YAML file ``kits/<name>.yml``. Its expectations read like
ReFrame's sanity checks: a step's JSON result, a path into it, and one
comparison. Unknown keys are rejected everywhere.
"""

from __future__ import annotations

import difflib
import enum
import re
from pathlib import Path
from typing import Any

import pydantic

from reprokit.config.layers import KitPath, kit_path
from reprokit.config.validation import validate
from reprokit.config.yamlfile import load_yaml
from reprokit.errors import ConfigError
from reprokit.output.hosttext import shown
from reprokit.step_kinds import STEP_KINDS
from reprokit.workloads.facts.arch import GPU_ARCHES

NAME_RE = r"^[a-z0-9][a-z0-9-]*$"
_OPERATORS = ("equals", "one_of", "at_least", "at_most", "contains_all", "matches", "equals_by_arch", "reference")


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)


class Image(_Strict):
    dockerfile: str
    target: str | None = None
    build_args: dict[str, str] = {}


class Step(_Strict):
    name: str = pydantic.Field(pattern=NAME_RE)
    uses: str
    image: str | None = None
    timeout_s: int | None = pydantic.Field(None, gt=0)
    with_: dict[str, Any] = pydantic.Field(default_factory=dict, alias="with")
    keep: list[str] = pydantic.Field(default_factory=lambda: ["**"])

    @pydantic.field_validator("uses")
    @classmethod
    def _kind_known(cls, value: str) -> str:
        if value not in STEP_KINDS:
            raise ValueError(f"unknown step kind {value!r}; known kinds: {', '.join(STEP_KINDS)}")
        return value

    @pydantic.model_validator(mode="after")
    def _params_known(self) -> Step:
        kind = STEP_KINDS[self.uses]
        accepted = kind.param_keys
        for key in self.with_:
            if key not in accepted:
                raise ValueError(
                    f"unknown parameter {key!r} in 'with' of step {self.name!r} ({self.uses});"
                    f" known parameters: {', '.join(accepted) or '(none)'}"
                )
        for key, default in kind.param_defaults:
            if key in self.with_ and not same_type(default, self.with_[key]):
                raise ValueError(f"parameter {key!r} of step {self.name!r} ({self.uses}) is {type_word(default)}"
                                 f" (its default: {default!r}), not {self.with_[key]!r}")
        for key, what in kind.required_params:
            if key not in self.with_:
                raise ValueError(f"step {self.name!r} ({self.uses}) needs the parameter {key!r} in 'with': {what}")
        return self

    @property
    def timeout(self) -> int:
        return self.timeout_s or STEP_KINDS[self.uses].default_timeout_s


class When(_Strict):
    gpu_arch: list[str]

    @pydantic.field_validator("gpu_arch")
    @classmethod
    def _arches(cls, value: list[str]) -> list[str]:
        for arch in value:
            if arch not in GPU_ARCHES:
                raise ValueError(f"unknown gpu_arch {arch!r}; use one of {', '.join(GPU_ARCHES)}")
        return value


class Reference(_Strict):
    """A performance reference as ReFrame writes one: a value and how far below and above it a result may be.

    ``lower``/``upper`` are fractions of ``value`` (``-0.1``: up to 10% below); a missing bound is no bound.
    """

    value: float
    lower: float | None = pydantic.Field(None, le=0)
    upper: float | None = pydantic.Field(None, ge=0)
    unit: str = ""


class Expectation(_Strict):
    """One check: ``path`` into ``step``'s result, compared with exactly one operator."""

    name: str
    step: str
    path: str
    when: When | None = None
    equals: Any = None
    one_of: list[Any] | None = None
    at_least: float | None = None
    at_most: float | None = None
    contains_all: list[Any] | None = None
    matches: str | None = None
    equals_by_arch: dict[str, Any] | None = None
    reference: Reference | None = None
    why: str = ""

    @pydantic.model_validator(mode="before")
    @classmethod
    def _one_operator(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [op for op in _OPERATORS if op in data]
            if len(given) != 1:
                have = ", ".join(given) if given else "none"
                raise ValueError(f"give exactly one of {', '.join(_OPERATORS)} (have {have})")
        return data

    @pydantic.field_validator("path")
    @classmethod
    def _path_syntax(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][\w-]*(\[(\*|\d+)\])*(\.[A-Za-z_][\w-]*(\[(\*|\d+)\])*)*", value):
            raise ValueError(f"bad result path {value!r}; write keys with dots and list items as [0] or [*]")
        return value

    @pydantic.field_validator("matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"bad regular expression {value!r}: {exc}") from None
        return value

    @pydantic.field_validator("equals_by_arch")
    @classmethod
    def _by_arch(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for arch in value or {}:
            if arch not in GPU_ARCHES:
                raise ValueError(f"unknown gpu_arch {arch!r}; use one of {', '.join(GPU_ARCHES)}")
        return value

    @property
    def operator(self) -> str:
        return next(op for op in _OPERATORS if op in self.model_fields_set)


class Describes(enum.StrEnum):
    """What a kit's expectations describe, so what their holding means in words (``report/headline.py``)."""

    BUG = "bug"  # they hold when the bug reproduces (PASS: reproduced)
    FIX = "fix"  # they hold when the fix works (PASS: fixed)
    HEALTH = "health"  # they hold when the stack is healthy (PASS: healthy; a crash fails them)


class Kit(_Strict):
    kit: str = pydantic.Field(pattern=NAME_RE)
    description: str
    pins: dict[str, str]
    images: dict[str, Image] = {}
    steps: list[Step] = pydantic.Field(min_length=1)
    expect: list[Expectation] = []
    expect_describes: Describes = Describes.BUG
    secrets: list[str] = []  # names of environment variables (e.g. HF_TOKEN); their values are never recorded

    @pydantic.field_validator("secrets")
    @classmethod
    def _env_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
                raise ValueError(f"secret {name!r} must be an environment variable name such as HF_TOKEN")
        return value

    @pydantic.field_validator("pins")
    @classmethod
    def _pins_are_versions(cls, value: dict[str, str]) -> dict[str, str]:
        for name, version in value.items():
            if not re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", str(version)):
                raise ValueError(f"pin {name!r} must be an exact version such as 0.6.3, got {version!r}")
        return value


def _check_references(kit: Kit, doc: Any) -> None:
    """Cross-field rules: pins the steps need, images and steps that exist, unique names."""
    names: dict[str, int] = {}
    for i, step in enumerate(kit.steps):
        loc = ("steps", i)
        if step.name in names:
            raise ConfigError(f"{doc.where(loc + ('name',))}: duplicate step name '{step.name}'; step names must be unique")
        names[step.name] = i
        kind = STEP_KINDS[step.uses]
        for pin in kind.needs_pins:
            if pin not in kit.pins:
                raise ConfigError(
                    f"{doc.where(('pins',))}: missing pin 'pins.{pin}', needed by step '{step.name}' (uses: {step.uses});"
                    f" add it with an exact version"
                )
        if step.image is not None and step.image not in kit.images:
            known = ", ".join(kit.images) or "(none declared)"
            raise ConfigError(
                f"{doc.where(loc + ('image',))}: step '{step.name}' uses unknown image '{step.image}'; images: {known}"
            )
    for i, exp in enumerate(kit.expect):
        if exp.step not in names:
            raise ConfigError(
                f"{doc.where(('expect', i, 'step'))}: expectation '{exp.name}' names unknown step '{exp.step}';"
                f" steps: {', '.join(names)}"
            )


def load_kit_file(path: Path | str) -> Kit:
    path = Path(path)
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{path}:1: a kit must be a mapping with kit, description, pins, steps")
    kit = validate(Kit, doc)
    if kit.kit != path.stem:
        raise ConfigError(f"{doc.where(('kit',))}: kit name '{kit.kit}' must match the file name '{shown(path.stem)}'")
    _check_references(kit, doc)
    return kit


def kit_names(kits_dir: KitPath | Path | str | None = None) -> list[str]:
    """The kits of a directory, or of every layer (``reprokit.config.layers``)."""
    return list(kit_path(kits_dir).kits())


def find_kit(name: str, kits_dir: KitPath | Path | str | None = None) -> tuple[Path, str]:
    """The file of kit ``name`` and the layer it comes from; an unknown name lists the known kits."""
    kits = kit_path(kits_dir)
    found = kits.kits()
    if not re.fullmatch(NAME_RE, name) or name not in found:
        hint = difflib.get_close_matches(name, list(found), n=1)
        did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        raise ConfigError(f"{kits}: unknown kit '{shown(name)}'{did_you_mean}; known kits:"
                          f" {', '.join(found) or '(none)'}")  # the operator's own text: still one visible line
    return found[name]


def load_kit(name: str, kits_dir: KitPath | Path | str | None = None) -> tuple[Kit, Path]:
    """Load kit ``name`` from a directory (``kits_dir/<name>.yml``) or from the layers (``None``: the last that has it)."""
    path, _ = find_kit(name, kits_dir)
    return load_kit_file(path), path


def select_steps(kit: Kit, only: list[str], skip: list[str]) -> Kit:
    """The kit with only the steps ``--only`` names (all by default) minus those ``--skip`` names.

    Expectations on a step left out stay in the kit: the judge finds no result and says INCONCLUSIVE.
    """
    names = [step.name for step in kit.steps]
    for flag, given in (("--only", only), ("--skip", skip)):
        for name in given:
            if name not in names:
                hint = difflib.get_close_matches(name, names, n=1)
                did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise ConfigError(f"{flag} {name}: kit '{kit.kit}' has no such step{did_you_mean}; steps: {', '.join(names)}")
    kept = [step for step in kit.steps if (not only or step.name in only) and step.name not in skip]
    if not kept:
        raise ConfigError(f"--only/--skip leave no step of kit '{kit.kit}' to run; steps: {', '.join(names)}")
    return kit.model_copy(update={"steps": kept})


def type_word(value: Any) -> str:
    """What kind of value a parameter takes, in words (a message names it)."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def same_type(reference: Any, value: Any) -> bool:
    """Whether ``value`` may stand where ``reference`` stands: a number for a number (an int where a float is), true or
    false for a flag, a string, list or mapping for one; a None reference (no default) takes anything."""
    if reference is None or value is None:
        return True
    if isinstance(reference, bool) or isinstance(value, bool):
        return isinstance(reference, bool) and isinstance(value, bool)
    if isinstance(reference, (int, float)):
        return isinstance(value, int) if isinstance(reference, int) else isinstance(value, (int, float))
    return isinstance(value, type(reference))


def apply_overrides(kit: Kit, sets: list[str]) -> tuple[Kit, dict[str, dict[str, Any]]]:
    """Apply ``--set STEP.KEY=VALUE`` (VALUE read as YAML) to the steps' ``with:``; returns the kit and what was set."""
    import yaml  # noqa: PLC0415

    overrides: dict[str, dict[str, Any]] = {}
    steps = {step.name: step for step in kit.steps}
    for spec in sets:
        target, sep, text = spec.partition("=")
        step_name, dot, key = target.partition(".")
        if not sep or not dot or not step_name or not key:
            raise ConfigError(f"--set {spec!r}: write STEP.KEY=VALUE, e.g. --set sweep.backends=[triton]")
        if step_name not in steps:
            raise ConfigError(f"--set {spec!r}: no step '{step_name}' in kit '{kit.kit}' (after --only/--skip);"
                              f" steps: {', '.join(steps)}")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"--set {spec!r}: VALUE is not YAML ({str(exc).splitlines()[0]}); quote it") from None
        given = steps[step_name].with_
        if key in given and not same_type(given[key], value):
            raise ConfigError(f"--set {spec!r}: {step_name}.{key} is {type_word(given[key])} in kit '{kit.kit}'"
                              f" ({given[key]!r}), not {value!r}")
        overrides.setdefault(step_name, {})[key] = value
    new_steps = []
    for step in kit.steps:
        if step.name in overrides:
            data = step.model_dump(by_alias=True, exclude_unset=True)
            data["with"] = {**step.with_, **overrides[step.name]}
            try:
                step = Step.model_validate(data)
            except pydantic.ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                raise ConfigError(f"--set {step.name}.*: {err['msg'].removeprefix('Value error, ')}") from None
        new_steps.append(step)
    return kit.model_copy(update={"steps": new_steps}), overrides
