"""``invoke new-kit NAME``: the skeleton of a kit that loads, from one step kind's own declaration.

The skeleton is written from what the kind declares (``reprokit.step_kinds``): its parameters as commented
``with:`` keys, the pins it needs (given with ``--pin``, else the version the other kits pin), its result
keys as the paths an expectation may start at. It loads as it is written, and `invoke kits --check` holds
it to the same rules as every kit; what it expects is the author's to write.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from pathlib import Path

from reprokit.config.kit import NAME_RE, kit_names, load_kit, load_kit_file
from reprokit.errors import ConfigError
from reprokit.step_kinds import STEP_KINDS

WORKLOAD_IMAGE = ("workload", "docker/workload.Dockerfile")


def _pins(kind_pins: tuple[str, ...], given: list[str], kits_dir: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for item in given:
        name, sep, version = item.partition("=")
        if not sep or not name or not version:
            raise ConfigError(f"--pin {item!r}: write NAME=VERSION, e.g. --pin sglang=0.5.9")
        pins[name] = version
    missing = [p for p in kind_pins if p not in pins]
    if missing:
        seen: dict[str, Counter] = {p: Counter() for p in missing}
        for name in kit_names(kits_dir):
            kit, _ = load_kit(name, kits_dir)
            for p in missing:
                if p in kit.pins:
                    seen[p][kit.pins[p]] += 1
        for p in missing:
            if not seen[p]:
                raise ConfigError(f"the step kind needs pin '{p}' and no kit in {kits_dir} pins it; give --pin {p}=VERSION")
            pins[p] = seen[p].most_common(1)[0][0]
    return pins


def skeleton(name: str, kind_name: str, pins: dict[str, str]) -> str:
    kind = STEP_KINDS[kind_name]
    lines = [f"kit: {name}", "description: >", "  TODO: the failure this kit reproduces, its exact error text and the",
             "  upstream issue it comes from (docs/adding-a-case.md).", "", "pins:"]
    lines += [f'  {pin}: "{version}"' for pin, version in pins.items()] or ["  {}"]
    if kind.where == "host":
        lines += ["", "images:", f"  {WORKLOAD_IMAGE[0]}:", f"    dockerfile: {WORKLOAD_IMAGE[1]}"]
    lines += ["", "steps:", f"  - name: {kind_name}", f"    uses: {kind_name}  # {kind.summary}"]
    if kind.where == "host":
        lines.append(f"    image: {WORKLOAD_IMAGE[0]}")
    if kind.param_keys:
        lines += ["    with: {}", "    # with:  (the parameters this kind takes)"]
        lines += [f"    #   {key}: ..." for key in kind.param_keys]
    lines += ["", "expect:", f"  - name: {kind_name}-ran", f"    step: {kind_name}", "    path: status", "    equals: ok",
              "    why: \"TODO: what the upstream issue says; a path starts at one of these keys of the result\""]
    lines += [f"    #   {key}" for key in kind.result_keys] or ["    #   (this kind declares no result keys)"]
    return "\n".join(lines) + "\n"


def new_kit(name: str, kind: str, kits_dir: str, pins: list[str]) -> Path:
    """Write ``kits_dir/<name>.yml`` (never over an existing file), check that it loads, return its path."""
    if not re.fullmatch(NAME_RE, name):
        raise ConfigError(f"kit name {name!r}: use lower-case letters, digits and '-' (e.g. triton-moe-configs)")
    if kind not in STEP_KINDS:
        raise ConfigError(f"--kind {kind!r}: not a step kind; known kinds: {', '.join(STEP_KINDS)}")
    directory = Path(kits_dir)
    path = directory / f"{name}.yml"
    if path.exists():
        raise ConfigError(f"{path}: exists already; choose another name or edit that kit")
    text = skeleton(name, kind, _pins(STEP_KINDS[kind].needs_pins, pins, directory))
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".yml", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        load_kit_file(Path(tmp).rename(path))  # it must load as written
    except BaseException:
        for leftover in (Path(tmp), path):
            leftover.unlink(missing_ok=True)
        raise
    return path

