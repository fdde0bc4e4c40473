"""Our own rules for the Dockerfiles, on top of hadolint: the ones that make an image reproducible.

- every ``FROM`` names its base through a build argument declared before it, with no default, that
  ``docker/images.lock.yml`` pins by digest (so the lock is the one place a base is chosen);
- no ``latest``;
- ``apt-get install`` with ``--no-install-recommends``, and the apt lists removed in the same ``RUN``;
- ``pip install`` with ``--no-cache-dir``, from a hash-pinned file (``--require-hashes -r FILE``);
- the image ends as a user other than root;
- no secret baked in: no ``ENV``/``ARG`` named like a secret, no certificate or key file copied in
  (the CA bundle that pip needs here is a build secret, mounted for one ``RUN``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from reprokit.images.lockfile import BaseImage

_SECRET_NAME = re.compile(r"(TOKEN|PASSWORD|PASSWD|SECRET|API_KEY|PRIVATE_KEY)", re.IGNORECASE)
_SECRET_FILE = re.compile(r"\.(crt|pem|key|p12)$|id_rsa|id_ed25519")
_ARG_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")


@dataclass(frozen=True)
class Instruction:
    line: int  # 1-based line where the instruction starts
    keyword: str  # upper case
    text: str  # the arguments, continuation lines joined


def parse(text: str) -> list[Instruction]:
    """Instructions with their line numbers (line continuations joined, comments and blank lines skipped)."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # comment lines inside a continued instruction are dropped by Docker too
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        joined = " ".join(part.strip() for part in pending if part.strip())
        keyword, _, rest = joined.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), rest.strip()))
        pending = []
    if pending:
        joined = " ".join(pending)
        keyword, _, rest = joined.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), rest.strip()))
    return instructions


def _arg_name_default(text: str) -> tuple[str, str | None]:
    name, eq, default = text.partition("=")
    return name.strip(), (default.strip().strip('"').strip("'") if eq else None)


def from_args(text: str) -> list[str]:
    """The build arguments that the ``FROM`` lines take their bases from, in order."""
    names = []
    for ins in parse(text):
        if ins.keyword == "FROM":
            image = _from_image(ins.text)
            match = _ARG_REF.match(image)
            if match and match.group(1) not in names:
                names.append(match.group(1))
    return names


def _from_image(text: str) -> str:
    words = [w for w in text.split() if not w.startswith("--")]
    return words[0] if words else ""


def _stage_names(instructions: list[Instruction]) -> set[str]:
    names = set()
    for ins in instructions:
        if ins.keyword == "FROM":
            words = [w for w in ins.text.split() if not w.startswith("--")]
            if len(words) == 3 and words[1].lower() == "as":
                names.add(words[2])
    return names


def problems(path: Path | str, text: str, lock: dict[str, BaseImage]) -> list[str]:
    """Every rule broken by the Dockerfile ``text``, as ``path:line: what and how to fix it``."""
    found: list[str] = []
    instructions = parse(text)

    def report(line: int, message: str) -> None:
        found.append(f"{path}:{line}: {message}")

    global_args: dict[str, str | None] = {}
    stages = _stage_names(instructions)
    seen_from = False
    last_user: Instruction | None = None
    for ins in instructions:
        if ins.keyword == "ARG" and not seen_from:
            name, default = _arg_name_default(ins.text)
            global_args[name] = default
        elif ins.keyword == "FROM":
            seen_from = True
            last_user = None
            image = _from_image(ins.text)
            match = _ARG_REF.match(image)
            if image in stages:
                continue
            if not match:
                report(ins.line, f"FROM {image}: name the base through a build argument (ARG BASE_IMAGE / FROM ${{BASE_IMAGE}})"
                                 " pinned by digest in docker/images.lock.yml, not directly")
                continue
            arg = match.group(1)
            if arg not in global_args:
                report(ins.line, f"FROM ${{{arg}}}: declare ARG {arg} before the first FROM")
            elif global_args[arg] is not None:
                report(ins.line, f"FROM ${{{arg}}}: ARG {arg} has a default ({global_args[arg]}); drop it, the base comes from"
                                 " docker/images.lock.yml alone")
            base = lock.get(arg)
            if base is None:
                report(ins.line, f"FROM ${{{arg}}}: docker/images.lock.yml has no entry {arg}; add its tag and run `invoke lock`")
            elif not base.pinned:
                report(ins.line, f"FROM ${{{arg}}}: {base.tag} has no digest in docker/images.lock.yml; run `invoke lock`")
            elif base.tag.endswith(":latest"):
                report(ins.line, f"FROM ${{{arg}}}: {base.tag} is 'latest'; name an exact tag")
        elif ins.keyword == "RUN":
            _check_run(ins, report)
        elif ins.keyword in ("ENV", "ARG"):
            for name in re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?==|\s|$)", ins.text):
                if _SECRET_NAME.search(name):
                    report(ins.line, f"{ins.keyword} {name}: a secret in a build argument or environment variable stays in the"
                                     " image's history; pass it with --secret and RUN --mount=type=secret")
        elif ins.keyword in ("COPY", "ADD"):
            sources = [w for w in ins.text.split() if not w.startswith("--")][:-1]
            for source in sources:
                if _SECRET_FILE.search(source):
                    report(ins.line, f"{ins.keyword} {source}: certificates and keys must not be baked into a layer;"
                                     " mount them for one RUN with --mount=type=secret")
            if ins.keyword == "ADD" and any(s.startswith(("http://", "https://")) for s in sources):
                report(ins.line, "ADD from a URL is neither pinned nor checked; download with a checksum in a RUN")
        elif ins.keyword == "USER":
            last_user = ins
    if not seen_from:
        found.append(f"{path}:1: no FROM")
    elif last_user is None:
        found.append(f"{path}:{instructions[-1].line}: the image runs as root; end with USER <a non-root user>")
    elif _expand_args(last_user.text, instructions).split(":")[0] in ("root", "0"):
        report(last_user.line, "the image ends as root; end with USER <a non-root user>")
    return found


def _expand_args(text: str, instructions: list[Instruction]) -> str:
    defaults = {}
    for ins in instructions:
        if ins.keyword == "ARG":
            name, default = _arg_name_default(ins.text)
            if default is not None:
                defaults[name] = default
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: defaults.get(m.group(1), m.group(0)), text)


def _check_run(ins: Instruction, report) -> None:
    command = ins.text
    if "apt-get install" in command or re.search(r"\bapt install\b", command):
        if "--no-install-recommends" not in command:
            report(ins.line, "apt-get install without --no-install-recommends pulls in packages nobody asked for")
        if not re.search(r"rm -rf /var/lib/apt/lists/\*", command):
            report(ins.line, "apt lists are left in the layer; end the same RUN with rm -rf /var/lib/apt/lists/*")
        if "apt-get update" not in command:
            report(ins.line, "apt-get install without apt-get update in the same RUN installs from a stale, cached list")
    for match in re.finditer(r"\bpip3? install\b([^&;|]*)", command):
        args = match.group(1)
        if "--no-cache-dir" not in args:
            report(ins.line, "pip install without --no-cache-dir leaves pip's cache in the layer")
        try:
            words = shlex.split(args)
        except ValueError:
            words = args.split()
        if "--require-hashes" not in words or not ({"-r", "--requirement"} & set(words)):
            report(ins.line, "pip install must install a hash-pinned file: --require-hashes -r <lock file>")
