"""One JSON object of a record being read into a typed model: each check is one line naming the file and the field.

``runs/x/manifest.json: steps[2].status: expected one of ok|..., got 7``; the models of ``models.py`` and
``fingerprint.py`` read through it.
"""

from __future__ import annotations

from typing import Any

from reprokit.errors import ConfigError

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
               list: "a list", type(None): "null"}


MISSING = object()


class Fields:
    """One JSON object being read into a model; every check names ``where`` and the field."""

    def __init__(self, data: Any, where: str, prefix: str = ""):
        self.where, self.prefix = where, prefix
        if not isinstance(data, dict):
            self.fail("", "an object", data)
        self.data: dict[str, Any] = data

    def fail(self, key: str, expected: str, got: Any) -> None:
        name = self.path(key)
        shown = "nothing (the field is missing)" if got is MISSING else repr(got)
        raise ConfigError(f"{self.where}: {name or 'the record'}: expected {expected}, got {shown}")

    def take(self, key: str, *types: type, required: bool = False) -> Any:
        """The value at ``key`` if it is one of ``types`` (None when absent and not required)."""
        if key not in self.data:
            if required:
                self.fail(key, _expected(types), MISSING)
            return None
        value = self.data[key]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            self.fail(key, _expected(types), value)
        return value

    def choice(self, key: str, allowed: tuple[str, ...], required: bool = True) -> Any:
        value = self.data.get(key)
        if key not in self.data and not required:
            return None
        if value not in allowed:
            self.fail(key, f"one of {'|'.join(allowed)}", value if key in self.data else MISSING)
        return value

    def only(self, names: tuple[str, ...], what: str) -> None:
        """Refuse a key the model does not know (a typo, or a newer schema)."""
        for key in self.data:
            if key not in names:
                name = self.path(key)
                raise ConfigError(f"{self.where}: {name}: not a field of {what}; the record is damaged or of a newer reprokit")

    def child(self, key: str) -> Fields:
        return Fields(self.data[key], self.where, self.path(key))

    def path(self, key: str) -> str:
        """``key``'s path from the record's top (``fingerprint.devices[1]``); an index joins without a dot."""
        return f"{self.prefix}.{key}" if self.prefix and key and not key.startswith("[") else f"{self.prefix}{key}"


def _expected(types: tuple[type, ...]) -> str:
    if int in types and float in types:  # an integer is a number too
        types = tuple(t for t in types if t is not int)
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
