"""Any inventory Ansible accepts, read by Ansible itself: ``ansible-inventory --list``.

YAML or INI files, directories of them, ``group_vars/`` and ``host_vars/`` next to the inventory (or its
directory) all come out of ``ansible-inventory`` as merged variables per host and the groups' members, exactly
as ``ansible-playbook`` will see them. Its errors become one line, ``file:line: problem``, where Ansible names the
place. One result is kept per inventory path and the mtimes of every file that can feed it (the command costs
0.6-1.2 s here: benchmarks/inventory_bench.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.errors import ConfigError

ANSIBLE_INVENTORY_TIMEOUT_S = 120
_WHERE = re.compile(r"The error appears to be in '(?P<file>[^']+)': line (?P<line>\d+), column \d+")
_FAILED_PLUGIN = re.compile(r"\* Failed to parse (?P<file>\S+) with (?P<plugin>\w+) plugin: (?P<msg>.*?)(?=\[WARNING\]|$)", re.S)
_PLUGIN_BY_SUFFIX = {".yml": "yaml", ".yaml": "yaml", ".json": "yaml", ".ini": "ini", ".cfg": "ini"}


@dataclass(frozen=True)
class AnsibleInventory:
    """What Ansible makes of an inventory: every host's merged variables and every group's hosts (transitively)."""

    hostvars: dict[str, dict[str, Any]]
    groups: dict[str, list[str]]  # group -> its hosts, children's hosts included, in Ansible's order
    host_groups: dict[str, list[str]]  # host -> its groups, the innermost first (never 'all' or 'ungrouped')


_cache: dict[tuple[str, tuple[tuple[str, int, int], ...]], AnsibleInventory] = {}


def tool(name: str) -> str | None:
    """An Ansible command: the one installed with reprokit (next to this Python, as in a venv or pipx's), else PATH's.

    pipx puts only ``reprokit`` on the PATH; ansible-core's commands stay in its venv's bin, next to the interpreter.
    """
    beside = Path(sys.executable).parent / name
    return str(beside) if os.access(beside, os.X_OK) else shutil.which(name)


def available() -> bool:
    return tool("ansible-inventory") is not None


def _sources(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Every file whose change can change the inventory, with its mtime (ns): the key of the cache."""
    base = path if path.is_dir() else path.parent
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for vars_dir in ("group_vars", "host_vars"):
        if (base / vars_dir).is_dir():
            files += sorted(p for p in (base / vars_dir).rglob("*") if p.is_file())
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in dict.fromkeys(files))


def read(path: Path) -> AnsibleInventory:
    """Run ``ansible-inventory -i PATH --list``, or reuse its result while no source file changed: in this process,
    and across commands from ``$XDG_CACHE_HOME/reprokit/inventory/`` (keyed also by Ansible's binary, ``ANSIBLE_*``
    variables and the ansible.cfg files Ansible would read)."""
    key = (str(path.resolve()), _sources(path))
    if key not in _cache:
        disk = _disk_entry(key)
        try:
            _cache[key] = parse_list(json.loads(disk.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            data = _run(path)
            _cache[key] = parse_list(data)
            _save(disk, data)
    return _cache[key]


def _disk_entry(key: tuple) -> Path:
    binary = tool("ansible-inventory") or ""
    settings: list = sorted((k, v) for k, v in os.environ.items() if k.startswith("ANSIBLE_"))
    for cfg in (Path("ansible.cfg"), Path.home() / ".ansible.cfg", Path("/etc/ansible/ansible.cfg")):  # Ansible's search
        if cfg.is_file():
            settings.append((str(cfg.resolve()), cfg.stat().st_mtime_ns))
    stamp = os.stat(binary).st_mtime_ns if binary else 0
    digest = hashlib.sha256(json.dumps([key, binary, stamp, settings]).encode()).hexdigest()[:32]
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reprokit" / "inventory"
    return root / f"{digest}.json"


def _save(entry: Path, data: dict[str, Any]) -> None:
    """Best effort, atomically (a reader sees the whole file or none): the cache only saves time."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        pass


def _run(path: Path) -> dict[str, Any]:
    env = dict(os.environ, ANSIBLE_INVENTORY_UNPARSED_FAILED="True", ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_LOCALHOST_WARNING="False", ANSIBLE_INVENTORY_UNPARSED_WARNING="False")
    if path.is_file() and path.suffix.lower() in _PLUGIN_BY_SUFFIX:
        # One plugin for a file that says what it is: its own error, not every plugin's guess.
        env["ANSIBLE_INVENTORY_ENABLED"] = _PLUGIN_BY_SUFFIX[path.suffix.lower()]
    try:
        proc = subprocess.run([tool("ansible-inventory") or "ansible-inventory", "-i", str(path), "--list"], capture_output=True, text=True, env=env,
                              timeout=ANSIBLE_INVENTORY_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ConfigError(f"{path}: ansible-inventory is not installed; reinstall reprokit (it depends on"
                          " ansible-core) to read this inventory") from None
    if proc.returncode != 0:
        raise ConfigError(describe_error(path, proc.stderr))
    return json.loads(proc.stdout)


def match(path: Path, pattern: str) -> list[str]:
    """The hosts an Ansible host pattern (``blackwell:!rtx-02``, ``rtx-0*``, ``a:&b``) selects, as Ansible selects them."""
    try:
        proc = subprocess.run([tool("ansible") or "ansible", "-i", str(path), "--list-hosts", pattern], capture_output=True, text=True,
                              timeout=ANSIBLE_INVENTORY_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="False"))
    except FileNotFoundError:
        raise ConfigError(f"--limit {pattern!r}: ansible is not installed; install ansible-core") from None
    names = [line.strip() for line in proc.stdout.splitlines()[1:] if line.strip()]
    if proc.returncode != 0 or not names:
        raise ConfigError(f"--limit {pattern!r} matches no host of {path}; `invoke hosts` lists them")
    return names


def describe_error(path: Path, stderr: str) -> str:
    """Ansible's complaint as one line, ``file:line: problem`` where Ansible names a line."""
    # Ansible wraps its warnings at 80 columns, at spaces and after hyphens (inside paths too): unwrap them.
    unwrapped = re.sub(r"-\n", "-", stderr)
    text = " ".join(unwrapped.split())
    where = _WHERE.search(text)
    failed = _FAILED_PLUGIN.search(text)
    if failed:
        problem = failed.group("msg").strip()
    else:
        problem = text.removeprefix("ERROR! ")
    problem = problem.split(" The error appears to be in")[0]
    problem = re.sub(r"^We were unable to read either as JSON nor YAML, these are the errors we got from each: JSON: .*?"
                     r"Syntax Error while loading YAML\. ", "YAML syntax error: ", problem)
    place = f"{where.group('file')}:{where.group('line')}" if where else str(path)
    if re.match(r"^\S+:\d+: ", problem):  # the ini plugin names the line itself
        place, problem = problem.split(": ", 1)
    return f"{place}: ansible-inventory: {problem.strip()}; fix it there (`ansible-inventory -i {path} --list` shows the same)"


def parse_list(data: dict[str, Any]) -> AnsibleInventory:
    hostvars = (data.get("_meta") or {}).get("hostvars") or {}
    children = {name: list(entry.get("children") or []) for name, entry in data.items() if name != "_meta"}
    direct = {name: list(entry.get("hosts") or []) for name, entry in data.items() if name != "_meta"}

    def members(group: str, seen: tuple[str, ...] = ()) -> list[str]:
        found = list(direct.get(group, []))
        for child in children.get(group, []):
            if child not in seen:
                found += [h for h in members(child, seen + (group,)) if h not in found]
        return found

    groups = {name: members(name) for name in direct if name != "ungrouped"}
    all_hosts = list(dict.fromkeys([*groups.get("all", []), *direct.get("ungrouped", []), *hostvars]))
    groups["all"] = all_hosts
    depth: dict[str, int] = {}

    def walk(group: str, level: int) -> None:
        if depth.get(group, -1) >= level:
            return
        depth[group] = level
        for child in children.get(group, []):
            walk(child, level + 1)

    walk("all", 0)
    host_groups = {host: sorted((g for g in groups if g != "all" and host in groups[g]), key=lambda g: -depth.get(g, 0))
                   for host in all_hosts}
    return AnsibleInventory({h: dict(hostvars.get(h) or {}) for h in all_hosts}, groups, host_groups)


def find_line(path: Path, host: str, key: str, groups: list[str], doc: Any = None) -> str:
    """Where ``key`` is set for ``host``, in Ansible's precedence: its host_vars, the inventory's host entry, its groups'
    group_vars and the inventory's group vars (innermost group first), then ``all``. ``doc``: the inventory as a
    ``LoadedYaml`` when it is one YAML file (exact lines); other files are searched for ``key:`` / ``key=``."""
    base = path if path.is_dir() else path.parent
    order: list[tuple[str, str]] = [("host_vars", host), ("hosts", host)]
    for group in [*groups, "all"]:
        order += [("group_vars", group), ("vars", group)]
    for kind, name in order:
        if kind in ("host_vars", "group_vars"):
            for candidate in _vars_files(base / kind, name):
                found = _grep(candidate, key)
                if found:
                    return found
        elif doc is not None:
            for loc in doc.lines:
                if len(loc) >= 3 and loc[-1] == key and ((kind == "hosts" and loc[-3:-1] == ("hosts", name))
                                                         or (kind == "vars" and loc[-3:-1] == (name, "vars"))):
                    return doc.where(loc)
                if kind == "hosts" and len(loc) >= 2 and loc[-1] == name and loc[-2] == "hosts" and not key:
                    return doc.where(loc)
    if doc is None:
        for candidate in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and "_vars" not in str(p)):
            found = _grep(candidate, key) if key else None
            if found:
                return found
    return str(path)


def _vars_files(vars_dir: Path, name: str) -> list[Path]:
    found = []
    for suffix in ("", ".yml", ".yaml", ".json"):
        candidate = vars_dir / f"{name}{suffix}"
        if candidate.is_file():
            found.append(candidate)
        elif candidate.is_dir():
            found += sorted(p for p in candidate.rglob("*") if p.is_file())
    return found


def _grep(path: Path, key: str) -> str | None:
    pattern = re.compile(rf"(^|\s){re.escape(key)}\s*[:=]")
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines, start=1):
        if pattern.search(line.split("#", 1)[0]):
            return f"{path}:{number}"
    return None
