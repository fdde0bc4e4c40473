"""``invoke report --upstream`` for a serving engine that crashed: a bug report drafted from the run record.

The FlashInfer report (``upstream_report.py``) explains bytes; an engine crash has none to explain. What its
maintainers need is what the record already holds: the triage's fatal line (who died, where in the log), the crash
handler's stack as the server printed it (the serve step's ``crash_dump``), the versions (the kit's pins, the
engine's own banner as the triage read it, the host's Python), and the byte-exact command with its environment,
so that the one command below reproduces it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Manifest

SERVE_STEP = "serve"


def _command_lines(serve: Any, params: dict[str, Any]) -> list[str]:
    """The server's command as it ran, with the environment the kit gave it (its values from the step's
    params.json: a kit's env holds no secrets, those go through secrets files)."""
    env = params.get("env") or {}
    listed = [f"{name}={shlex.quote(str(env[name]))}" for name in (serve.env or []) if name in env]
    return ["```sh", " ".join([*listed, shlex.join(serve.command or [])]), "```"]


def crash_report(run_dir: Path, manifest: Manifest, triage: Any, serve: Any, params: dict[str, Any]) -> str:
    fatal = triage.fatal
    evidence = (triage.evidence or {}) if isinstance(triage.evidence, dict) else {}
    location = str(evidence.get("location") or "")
    where = location.replace(f"{run_dir}/", "", 1) if location else "?"
    versions = triage.versions or {}
    engine = ", ".join(f"{name} {version}" for name, version in versions.items()) or "not named in the log"
    fingerprint = manifest.fingerprint or Fingerprint()
    python = fingerprint.host.python if fingerprint.host is not None and fingerprint.host.written("python") else "?"
    pins = ", ".join(f"{name} {version}" for name, version in (manifest.pins or {}).items())
    kit = manifest.kit_name or "?"
    lines = [f"# [{engine}] {fatal.kind if fatal else triage.verdict}: {evidence.get('text') or triage.reason}", "",
             f"Reproduced by reprokit's kit `{kit}` (run `{run_dir.name}`): the triage read the server's log as "
             f"**{triage.verdict}**.", "",
             "## What happened", "", f"- {str(triage.reason).replace(f'{run_dir}/', '')}", f"- the line: `{where}`"]
    if serve is not None:
        lines += [f"- the server: outcome `{serve.outcome}`, ready after {serve.ready_after_s} s, first request "
                  f"answered HTTP {(serve.smoke or {}).get('http_status', '?')}"]
    dump = serve.crash_dump if serve is not None else None
    if dump:
        lines += ["", f"## Stack (the crash handler's, {dump.get('file')}:{dump.get('line')})", "", "```",
                  *dump.get("lines", []), "```"]
    lines += ["", "## Versions", "", f"- pins: {pins}", f"- the engine's log names: {engine}",
              f"- the host's Python (its fingerprint): {python}", "", "## Command (byte-exact, as the server ran)", ""]
    lines += _command_lines(serve, params) if serve is not None else ["(no serve step in this run)"]
    lines += ["", "## Reproduce", "", "```sh", f"invoke repro {kit}", "```", ""]
    return "\n".join(lines)
