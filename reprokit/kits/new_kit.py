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
from reprokit.config.layers import KitPath, kit_path
from reprokit.errors import ConfigError
from reprokit.step_kinds import STEP_KINDS
from reprokit.upstream.issue_reader import IssueFacts, read_issue

WORKLOAD_IMAGE = ("workload", "docker/workload.Dockerfile")


def _pins(kind_pins: tuple[str, ...], given: list[str], kits_dir: KitPath) -> dict[str, str]:
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


def read_issue_text(source: str) -> str:
    """The saved text of an issue (a file), or the page at an http(s) URL; one line saying what to do otherwise."""
    if re.match(r"^https?://", source):
        import urllib.request  # noqa: PLC0415

        try:
            with urllib.request.urlopen(source, timeout=20) as response:  # noqa: S310 - a URL the user gave
                return response.read(2_000_000).decode("utf-8", "replace")
        except OSError as exc:
            raise ConfigError(f"--from-issue {source}: cannot read it from here ({exc}); save the thread's text to a"
                              " file and pass the file") from None
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"--from-issue {source}: cannot read the file ({exc.strerror}); save the issue's text there") from None


def from_issue(name: str, skeleton_text: str, facts: IssueFacts) -> str:
    """The kind's skeleton with what the issue says: its thread and figures in the description, the pins it
    names, the figures as expectations to aim at (commented: their paths depend on the cases the author writes)."""
    found = [f"thread {', '.join(facts.threads) or '(not named in the text)'}",
             f"arch {facts.arch or '(not named: give the GPU)'}",
             "kernel " + (", ".join(facts.kernels) or "(not named)"),
             "needs " + (", ".join(f"{n} B" for n in facts.required_bytes) or "(no byte figure found)")
             + (f" against {', '.join(f'{n} B' for n in facts.limit_bytes)}" if facts.limit_bytes else "")]
    description = ["description: >", f"  {facts.title}"[:300],
                   *[f"  {line}" for line in found], "  TODO: what this kit reproduces and the release range where it holds."]
    if facts.quote:
        description.append(f"  Quoted: {facts.quote}")
    lines = skeleton_text.splitlines()
    start = lines.index("description: >")
    lines[start:start + 3] = description  # a folded scalar: ': ' and '#' in it are text
    expect = ["  # The issue's figures, to become expectations on this kind's result (docs/adding-a-case.md):"]
    expect += [f"  #   equals: {n}   # {facts.threads[0] if facts.threads else 'the thread'}: needed by the failing launch"
               for n in facts.required_bytes]
    expect += [f"  #   limit {n} B ({facts.arch or 'the arch'})" for n in facts.limit_bytes]
    return "\n".join(lines + expect) + "\n"


def new_kit(name: str, kind: str | None, kits_dir: KitPath | Path | str, pins: list[str], issue: str | None = None) -> Path:
    """Write ``kits_dir/<name>.yml`` (never over an existing file), check that it loads, return its path.

    ``kits_dir``: a directory, or the layers (``reprokit.config.layers.KitPath``), written to their top one (the
    project's ``kits``, else the user's) and read whole for the pins the other kits use.

    ``issue``: a saved issue thread (a file or a URL) whose arch, kernel, figures, versions and thread the
    skeleton carries (``reprokit.upstream.issue_reader``); its guess of the step kind is used when ``kind`` is None.
    """
    if not re.fullmatch(NAME_RE, name):
        raise ConfigError(f"kit name {name!r}: use lower-case letters, digits and '-' (e.g. triton-moe-configs)")
    facts = read_issue(read_issue_text(issue)) if issue else None
    kind = kind or (facts.kind if facts and facts.kind else "triton-smem")
    if kind not in STEP_KINDS:
        raise ConfigError(f"--kind {kind!r}: not a step kind; known kinds: {', '.join(STEP_KINDS)}")
    kits = kit_path(kits_dir)
    directory = Path(kits)
    path = directory / f"{name}.yml"
    if path.exists():
        raise ConfigError(f"{path}: exists already; choose another name or edit that kit")
    given = list(pins)
    if facts:  # every version the issue names is a pin (a --pin wins): the stack the thread ran
        named = {p.partition("=")[0] for p in given}
        given += [f"{p}={v}" for p, v in facts.versions.items() if p not in named]
    text = skeleton(name, kind, _pins(STEP_KINDS[kind].needs_pins, given, kits))
    if facts:
        text = from_issue(name, text, facts)
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

