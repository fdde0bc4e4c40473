"""How a record's models are read and written: pydantic validates, this module words the first error and keeps
the record's bytes.

The models (``models.py``, ``fingerprint.py``, ``inputs.py``) are pydantic dataclasses: built in code by position,
as before, and validated, like the kits and the inventory, when a record is read (``Record.from_json``). A field of
the wrong type is one line naming the file and the field, in the record's own words
(``runs/x/manifest.json: steps[2].status: expected one of ok|..., got 7``), the words drawn from the field's
annotation. A field annotated ``Omittable[X]`` is left out of the file when it is None, and a file may not write it as
null; the others are written even when null. ``to_json`` writes the fields in their declared order (or ``WRITTEN``),
so a record read and written again is the same bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Annotated, Any, ClassVar, TypeVar

import pydantic
from pydantic_core import PydanticCustomError

from reprokit.errors import ConfigError

FROM_FILE = {"from_file": True}  # the validation context of a record being read: its file's rules apply
KNOWN_ONLY = pydantic.ConfigDict(extra="forbid")  # a record's own files: an unknown key is damage or a newer schema
_T = TypeVar("_T")


def _not_null(value: Any, info: pydantic.ValidationInfo) -> Any:
    if value is None and info.context == FROM_FILE:
        raise PydanticCustomError("not_null", "left out when unset, never null")
    return value


_LEFT_OUT = pydantic.BeforeValidator(_not_null)
Omittable = Annotated[_T | None, _LEFT_OUT]  # None in memory, left out of the file; a null in the file is refused


def in_file(allowed: typing.Callable[[Any], bool], expected: str) -> pydantic.BeforeValidator:
    """A rule a value read from a file meets (``expected`` words it); a value built in code is not held to it."""
    def check(value: Any, info: pydantic.ValidationInfo) -> Any:
        if info.context == FROM_FILE and not allowed(value):
            raise PydanticCustomError("expected", "expected {expected}", {"expected": expected})
        return value
    return pydantic.BeforeValidator(check)


def file_keys(data: Any, info: pydantic.ValidationInfo, required: tuple[str, ...] = (), refused: tuple[str, ...] = ()) -> Any:
    """A file's object (a model's before-validator) has the keys ``required``, which code may leave to their
    defaults, and none of ``refused``, which code keeps in memory only; the error's path names the key."""
    if info.context == FROM_FILE and isinstance(data, dict):
        for key in required:
            if key not in data:
                raise PydanticCustomError("missing", "missing", {"field": key})
        for key in refused:
            if key in data:
                raise PydanticCustomError("extra_forbidden", "not a field", {"field": key})
    return data


class Record:
    """A model of a record's JSON (mixed into pydantic dataclasses): read with ``from_json``, written with ``to_json``."""

    WHAT: ClassVar[str] = "a record's object"  # how an unknown key's error names the model
    WRITTEN: ClassVar[tuple[str, ...] | None] = None  # the JSON keys in the order written; None: the declared order

    @classmethod
    def from_json(cls, data: Any, where: str, prefix: str = "") -> Any:
        """``data`` (a file's JSON, at ``where``; its fields' paths start at ``prefix``) as this model."""
        try:
            return _adapter(cls).validate_python(data, context=FROM_FILE)
        except pydantic.ValidationError as exc:
            raise ConfigError(one_line(cls, exc, where, prefix)) from None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key, omittable, holds_models in _written(type(self)):
            value = getattr(self, name)
            if value is not None or not omittable:
                out[key] = plain(value) if holds_models else value
        return out

    def json_of(self, name: str) -> Any:
        """The field ``name`` as JSON data (a model in it as its ``to_json``)."""
        value = getattr(self, name)
        return plain(value) if name in _holding_models(type(self)) else value


def plain(value: Any) -> Any:
    """``value`` as JSON data: models as their ``to_json``, lists and objects item by item."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


@functools.cache
def _adapter(model: type) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(model)


@functools.cache
def _written(model: type) -> list[tuple[str, str, bool, bool]]:
    """Each written field of ``model``: its attribute, its JSON key, whether it is left out when None, whether it
    holds models (the others, JSON already, are written as they are)."""
    fields = {info.alias or name: (name, info) for name, info in model.__pydantic_fields__.items() if not info.exclude}
    hints = _hints(model)
    return [(fields[key][0], key, _LEFT_OUT in fields[key][1].metadata, holds_models(hints[key]))
            for key in model.WRITTEN or tuple(fields)]


@functools.cache
def _holding_models(model: type) -> frozenset[str]:
    return frozenset(name for name, _, _, holds in _written(model) if holds)


def holds_models(hint: Any) -> bool:
    """Whether a field annotated ``hint`` holds a model, itself or in a list or an object."""
    hint = _strip(hint)
    return dataclasses.is_dataclass(hint) or any(holds_models(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


@functools.cache
def _hints(model: type) -> dict[str, Any]:
    """``model``'s fields' annotations by JSON key."""
    hints = typing.get_type_hints(model, include_extras=True)
    return {info.alias or name: hints[name] for name, info in model.__pydantic_fields__.items()}


def one_line(model: type, exc: pydantic.ValidationError, where: str, prefix: str) -> str:
    """The first error of ``exc`` as ``where: path: expected X, got Y`` (or an unknown key's line)."""
    error = exc.errors(include_url=False)[0]
    kind, ctx = error["type"], error.get("ctx") or {}
    loc = (*error["loc"], ctx["field"]) if "field" in ctx else error["loc"]
    path, hint, owner = _walk(model, loc, prefix)
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        what = getattr(owner, "WHAT", "a record's object")
        return f"{where}: {path}: not a field of {what}; the record is damaged or of a newer reprokit"
    got = "nothing (the field is missing)" if kind in ("missing", "missing_argument") else repr(error.get("input"))
    expected = ctx["expected"] if kind == "expected" else _words(hint, null=kind != "not_null")
    return f"{where}: {path or 'the record'}: expected {expected}, got {got}"


def _walk(model: type, loc: tuple[Any, ...], prefix: str) -> tuple[str, Any, type]:
    """The path of ``loc`` as the record shows it (``steps[2].status``, ``artifacts['x'].bytes``), the annotation
    there and the model that holds it. Parts pydantic adds for a union's branches end the walk."""
    path, hint, owner = prefix, model, model
    for part in loc:
        base = _strip(hint)
        origin = typing.get_origin(base)
        if dataclasses.is_dataclass(base):
            owner, hint = base, _hints(base).get(part)
            path = f"{path}.{part}" if path else str(part)
        elif origin is list and isinstance(part, int):
            hint, path = typing.get_args(base)[0], f"{path}[{part}]"
        elif origin is dict:
            hint = typing.get_args(base)[1]
            path = f"{path}[{part!r}]" if dataclasses.is_dataclass(_strip(hint)) else f"{path}.{part}"
        else:
            break
    return path, hint, owner


def _strip(hint: Any) -> Any:
    """``hint`` without ``Annotated`` and without ``| None``, when one type is left."""
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    options = [t for t in _options(hint) if t is not type(None)]
    return _strip(options[0]) if len(options) == 1 and options[0] is not hint else hint


def _options(hint: Any) -> tuple[Any, ...]:
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)


_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list", dict: "an object"}


def _words(hint: Any, null: bool = True) -> str:
    """What a field annotated ``hint`` holds, in words (``int | float | None``: a number or null)."""
    options = [_strip(t) for t in _options(hint)]
    if Any in options:
        return "a value (null when none)"
    words = []
    for option in options:
        if option is type(None):
            words += ["null"] if null else []
        elif isinstance(option, type) and issubclass(option, Enum):
            words.append(f"one of {'|'.join(member.value for member in option)}")
        elif dataclasses.is_dataclass(option):
            words.append("an object")
        elif not (option is int and float in options):  # an integer is a number too
            words.append(_WORDS.get(typing.get_origin(option) or option, str(option)))
    return " or ".join(words)
