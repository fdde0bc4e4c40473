"""YAML loading that remembers where every value came from.

Errors in the inventory or a kit must name ``file:line`` and the field, so the
loader records the line of every mapping key and sequence item under its path
(a tuple of keys and indexes), and rejects duplicate keys, which plain PyYAML
silently lets the last one win.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprokit.errors import ConfigError

PathKey = tuple[str | int, ...]
MAX_DEPTH = 64  # inventories and kits nest a few levels; deeper is a mistake or an attack
MAX_NODES = 100_000  # values after alias expansion: a 568-byte "billion laughs" file must not take the memory
MAX_FILE_BYTES = 8 << 20
_EVENT_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when there: events at C speed
_VALUE_EVENTS = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)


@dataclass
class LoadedYaml:
    """A parsed YAML document and the 1-based line of each path in it."""

    path: Path
    data: Any
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, loc: PathKey) -> int | None:
        """Line of ``loc``, or of its nearest ancestor that has one."""
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get((), None)

    def where(self, loc: PathKey) -> str:
        line = self.line_of(loc)
        return f"{self.path}:{line}" if line else str(self.path)


def dotted(loc: PathKey) -> str:
    """``('hosts', 'gpu1', 'ansible_port')`` -> ``hosts.gpu1.ansible_port``; indexes as ``[3]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(document)"


class _Budget:
    """Counts the values built, aliases included, so expansion stays bounded."""

    def __init__(self, path: Path):
        self.path = path
        self.nodes = 0

    def spend(self, node: yaml.Node, loc: PathKey, lines: dict[PathKey, int]) -> None:
        self.nodes += 1
        depth = len(loc)
        # an aliased node carries the line of its anchor; the line of the top-level key that led here is the useful one
        line = lines.get(loc[:1], node.start_mark.line + 1) if loc else node.start_mark.line + 1
        if depth > MAX_DEPTH:
            raise ConfigError(f"{self.path}:{line}: nested more than {MAX_DEPTH} levels deep (or an alias refers to"
                              " itself); flatten it")
        if self.nodes > MAX_NODES:
            raise ConfigError(f"{self.path}:{line}: more than {MAX_NODES} values once aliases are expanded; write the"
                              " values out instead of repeating aliases (&/*)")


def _count_values(text: str, path: Path) -> None:
    """Refuse a document of more than ``MAX_NODES`` values before any node is built, in bounded memory.

    Composing first and counting after took 23 s and 518 MB for an 8 MiB inventory, then blamed aliases it did not
    have; the event stream is read once, stopping at the first value past the cap. A syntax error is left to the
    composer, which says it with its line.
    """
    values = 0
    in_mapping: list[bool | None] = []  # per open collection: a mapping expecting its next key?
    try:
        for event in yaml.parse(text, Loader=_EVENT_PARSER):
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                in_mapping.pop()
                continue
            if not isinstance(event, (*_VALUE_EVENTS, yaml.AliasEvent)):
                continue
            is_key = bool(in_mapping) and in_mapping[-1] is True
            if in_mapping and in_mapping[-1] is not None:
                in_mapping[-1] = not in_mapping[-1]  # key, value, key, ...
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                in_mapping.append(True if isinstance(event, yaml.MappingStartEvent) else None)
            if is_key or isinstance(event, yaml.AliasEvent):
                continue  # keys are not values; an alias's values are counted as it is expanded
            values += 1
            if values > MAX_NODES:
                raise ConfigError(f"{path}:{event.start_mark.line + 1}: more than {MAX_NODES} values in one file; a kit"
                                  " or inventory holds far fewer: split it or remove what is not needed")
    except yaml.YAMLError:
        return


def _compose_with_lines(node: yaml.Node, loc: PathKey, lines: dict[PathKey, int], path: Path,
                        budget: _Budget | None = None) -> Any:
    budget = budget or _Budget(path)
    budget.spend(node, loc, lines)
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise ConfigError(
                    f"{path}:{key_node.start_mark.line + 1}: YAML merge keys ('<<') are not supported; write the keys out"
                )
            key = yaml.SafeLoader.construct_object(_LOADER_FOR_SCALARS, key_node)  # type: ignore[arg-type]
            if not isinstance(key, (str, int)):
                raise ConfigError(f"{path}:{key_node.start_mark.line + 1}: mapping keys must be strings, got {key!r}")
            key = str(key)
            if key in result:
                first = lines.get(loc + (key,))
                raise ConfigError(
                    f"{path}:{key_node.start_mark.line + 1}: duplicate key '{dotted(loc + (key,))}'"
                    f" (first defined on line {first}); keep one of them"
                )
            lines[loc + (key,)] = key_node.start_mark.line + 1
            result[key] = _compose_with_lines(value_node, loc + (key,), lines, path, budget)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_compose_with_lines(item, loc + (i,), lines, path, budget) for i, item in enumerate(node.value)]
    return yaml.SafeLoader.construct_object(_LOADER_FOR_SCALARS, node)  # type: ignore[arg-type]


class _ScalarLoader(yaml.SafeLoader):
    pass


_LOADER_FOR_SCALARS = _ScalarLoader("")


def load_yaml(path: Path | str) -> LoadedYaml:
    """Parse one YAML document; any problem is a ``ConfigError`` naming ``file:line``."""
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read forever, a device never end
            raise ConfigError(f"{path}: not a regular file; give a YAML file")
        if info.st_size > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: {info.st_size} bytes; a kit or inventory is at most {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    _count_values(text, path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read; flatten it (at most {MAX_DEPTH} levels)") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError(f"{path}{line}: YAML syntax error: {problem}; fix the indentation or quoting there") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML syntax error: {exc}") from None
    lines: dict[PathKey, int] = {}
    if node is None:
        return LoadedYaml(path, None, lines)
    try:
        data = _compose_with_lines(node, (), lines, path)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{line}: {exc.problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read; flatten it (at most {MAX_DEPTH} levels)") from None
    return LoadedYaml(path, data, lines)
