"""``invoke --dry repro KIT``: the plan of a run, computed from the kit, the inventory and the flags alone.

Nothing here connects to a host, reads a fingerprint or writes a record: parameters that the run completes from the
host's probe (``arch: host``, the opt-in limit) are shown as the kit gives them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.config.kit import Kit
from reprokit.hosts.factory import ConnectOptions
from reprokit.hosts.host_executor import code_bundle
from reprokit.hosts.ssh_config import resolve as resolve_ssh_config
from reprokit.images.build import built_images
from reprokit.step_kinds import STEP_KINDS


def _route(host: Host, inventory: Inventory, options: ConnectOptions) -> str:
    """``name (user@address:port via gateway, ...)`` as the connection will go, the SSH config applied."""
    resolved, extended = resolve_ssh_config(host, inventory, options.ssh_config)
    hops = [f"{hop.user + '@' if hop.user else ''}{hop.address}:{hop.port}" for hop in extended.gateways(resolved)]
    via = f" via {', '.join(hops)}" if hops else ""
    return f"{host.name} ({resolved.user + '@' if resolved.user else ''}{resolved.address}:{resolved.port}{via})"


def describe_plan(kit: Kit, kit_path: Path, hosts: list[Host], runs_dir: Path, options: ConnectOptions,
                  selection: dict[str, Any], inventory: Inventory | None = None) -> dict[str, Any]:
    """What a run of ``kit`` on ``hosts`` would do, step by step, as data (the ``--json`` form of the plan)."""
    bundle_bytes = len(code_bundle()[0])
    inventory = inventory or Inventory(path=None, hosts={h.name: h for h in hosts})
    plans = []
    for host in hosts:
        images = {**built_images(host.name, kit.kit), **options.images}
        where_host = "this machine" if host.is_local else _route(host, inventory, options)
        steps = []
        for step in kit.steps:
            kind = STEP_KINDS[step.uses]
            on_host = kind.where == "host"
            container = on_host and host.runtime == "docker" and step.image is not None
            steps.append({
                "name": step.name,
                "uses": step.uses,
                "runs_on": (where_host + (" in a container" if container else " natively")) if on_host
                else "the control plane (on the pulled-back files)",
                "image": {"name": step.image, "reference": images.get(step.image) or "(none built: `invoke build`)"}
                if container else None,
                "timeout_s": step.timeout,
                "params": dict(step.with_),
                "uploads": (["params.json"] + ([f"secrets as a mode-0600 file: {', '.join(kit.secrets)}"] if kit.secrets else []))
                if on_host and not host.is_local else [],
                "pulls_back": [f"steps/{step.name}/ ({', '.join(step.keep)})"] if on_host and not host.is_local else [],
            })
        plans.append({
            "host": host.name,
            "connection": "local" if host.is_local else "ssh",
            "runtime": host.runtime,
            "uploads": [] if host.is_local else [f"workload code (reprokit/workloads, {bundle_bytes} B tar.gz)"],
            "record": str(runs_dir / "<run id>") + "/",
            "steps": [{"name": "fingerprint", "uses": "fingerprint", "runs_on": where_host, "image": None, "timeout_s": None,
                       "params": {}, "uploads": [], "pulls_back": []}, *steps],
        })
    return {"dry_run": True, "kit": kit.kit, "kit_path": str(kit_path), "pins": dict(kit.pins),
            "expectations": len(kit.expect), "selection": selection, "hosts": plans}


def render_plan(plan: dict[str, Any]) -> str:
    lines = [f"plan of kit {plan['kit']} ({plan['kit_path']}), dry run: nothing is connected, run or written"]
    selection = plan["selection"]
    if any(selection.values()):
        lines.append(f"  selection: {selection}")
    for host in plan["hosts"]:
        lines.append(f"host {host['host']} ({host['connection']}, {host['runtime']} runtime); record {host['record']}")
        for upload in host["uploads"]:
            lines.append(f"  upload: {upload}")
        for number, step in enumerate(host["steps"], start=1):
            image = f"; image {step['image']['name']} = {step['image']['reference']}" if step["image"] else ""
            timeout = f"; timeout {step['timeout_s']} s" if step["timeout_s"] else ""
            lines.append(f"  [{number}] {step['name']} ({step['uses']}) on {step['runs_on']}{image}{timeout}")
            if step["params"]:
                lines.append(f"      with: {step['params']}")
            for upload in step["uploads"]:
                lines.append(f"      upload: {upload}")
            for pulled in step["pulls_back"]:
                lines.append(f"      pull back: {pulled}")
    lines.append(f"then: judge {plan['expectations']} expectation(s), write report.md and report.html")
    return "\n".join(lines)
