"""Turn pydantic validation errors into one-line messages with file:line and field."""

from __future__ import annotations

import types
import typing
from typing import Any

import pydantic

from reprokit.config.yamlfile import LoadedYaml, PathKey, dotted
from reprokit.errors import ConfigError


def _unwrap(annotation: Any) -> list[Any]:
    """Model classes reachable through Optional / list / dict / Annotated of ``annotation``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, dict):
        found: list[Any] = []
        for arg in typing.get_args(annotation):
            found.extend(_unwrap(arg))
        return found
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    return []


def model_at(root: type[pydantic.BaseModel], loc: PathKey) -> type[pydantic.BaseModel] | None:
    """The model class that holds the field at ``loc`` (list indexes and dict keys are skipped)."""
    model: type[pydantic.BaseModel] | None = root
    for part in loc[:-1]:
        if model is None:
            return None
        if isinstance(part, int) or part not in model.model_fields:
            # an index into a list, or a user key of a dict (e.g. a host name): stay on the item model
            continue
        candidates = _unwrap(model.model_fields[part].annotation)
        model = candidates[0] if candidates else None
    return model


def known_keys(root: type[pydantic.BaseModel], loc: PathKey) -> list[str]:
    model = model_at(root, loc)
    if model is None:
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def _clean_loc(loc: tuple[Any, ...]) -> PathKey:
    # pydantic inserts discriminator / function names (e.g. 'function-after[...]') into loc
    return tuple(p for p in loc if not (isinstance(p, str) and ("[" in p and "]" in p and p.endswith("]"))))


def validate(model: type[pydantic.BaseModel], doc: LoadedYaml, *, base: PathKey = (), what: str = "") -> Any:
    """Validate ``doc.data`` at ``base`` against ``model``; the first error becomes a ConfigError."""
    data = doc.data
    for part in base:
        data = data[part]
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ConfigError(describe_first_error(model, exc, doc, base, what)) from None


def describe_first_error(
    model: type[pydantic.BaseModel], exc: pydantic.ValidationError, doc: LoadedYaml, base: PathKey, what: str,
    field_from_base: bool = True,
) -> str:
    """One line: ``file:line: <what>field 'a.b': problem``; the field path starts at ``base`` unless told not to."""
    err = exc.errors(include_url=False)[0]
    loc = _clean_loc(tuple(err["loc"]))
    full = base + loc
    where = doc.where(full)
    field = dotted(full if field_from_base else loc)
    prefix = f"{where}: {what}" if what else f"{where}: "
    kind = err["type"]
    if kind == "extra_forbidden":
        keys = ", ".join(known_keys(model, loc)) or "(none)"
        return f"{prefix}unknown key '{field}'; known keys here: {keys}"
    if kind == "missing":
        return f"{prefix}missing required field '{field}'; add it"
    value = err.get("input")
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
        return f"{prefix}field '{field}': {msg}"
    return f"{prefix}field '{field}': {msg} (got {shown})"
