"""``invoke --dry repro KIT``: the run's own preparation and planner, with the launch left out.

The dry run builds each host's executor as the run does (``phases.prepare.host_executor``: the images checked, the
access, launcher and runtime chosen by their registries), plans each step with the run's planner
(``plan.planner.plan_step``) and asks the host's runtime for the command each step would run. So it cannot drift
from the run: what the run refuses before its first step (an unknown image, a missing image reference, an unknown
axis name) the dry run refuses with the same error and exit code. Nothing connects to a host, reads a fingerprint or
writes a record: parameters the run completes from the host's probe come from the inventory's ``gpu_arch`` and
``gpu_count`` when it gives them, and are shown as the kit gives them otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.config.inventory import Host, Inventory
from reprokit.config.kit import Kit
from reprokit.hosts.factory import ConnectOptions
from reprokit.hosts.host_executor import HostExecutor, code_bundle
from reprokit.hosts.runtimes import StepPlace
from reprokit.hosts.ssh_config import resolve as resolve_ssh_config
from reprokit.phases.prepare import host_executor
from reprokit.plan.planner import plan_step
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import StepEntry, StepStatus

RUN_ID = "<run id>"


def _route(host: Host, inventory: Inventory, options: ConnectOptions) -> str:
    """``name (user@address:port via gateway, ...)`` as the connection will go, the SSH config applied."""
    resolved, extended = resolve_ssh_config(host, inventory, options.ssh_config)
    hops = [f"{hop.user + '@' if hop.user else ''}{hop.address}:{hop.port}" for hop in extended.gateways(resolved)]
    via = f" via {', '.join(hops)}" if hops else ""
    return f"{host.name} ({resolved.user + '@' if resolved.user else ''}{resolved.address}:{resolved.port}{via})"


def inventory_fingerprint(host: Host) -> Fingerprint:
    """What the run's fingerprint would say of the GPUs, as far as the inventory says it (nothing is probed)."""
    if not host.gpu_arch:
        return Fingerprint.from_json({"gpu_status": "unknown", "devices": [],
                                      "gpu_reason": "the dry run probes nothing; the run plans it from the host's fingerprint"},
                                     "dry run")
    devices = [{"index": i, "gpu_arch": host.gpu_arch} for i in range(host.gpu_count or 1)]
    return Fingerprint.from_json({"devices": devices}, f"{host.source} (inventory)")


def describe_plan(kit: Kit, kit_path: Path, hosts: list[Host], runs_dir: Path, options: ConnectOptions,
                  selection: dict[str, Any], inventory: Inventory | None = None,
                  kits_dir: Path | None = None) -> dict[str, Any]:
    """What a run of ``kit`` on ``hosts`` would do, step by step, as data (the ``--json`` form of the plan)."""
    inventory = inventory or Inventory(path=None, hosts={h.name: h for h in hosts})
    plans = [_host_plan(kit, host, runs_dir, inventory, options, kits_dir or kit_path.parent) for host in hosts]
    return {"dry_run": True, "kit": kit.kit, "kit_path": str(kit_path), "pins": dict(kit.pins),
            "expectations": len(kit.expect), "selection": selection, "hosts": plans}


def _host_plan(kit: Kit, host: Host, runs_dir: Path, inventory: Inventory, options: ConnectOptions,
               kits_dir: Path) -> dict[str, Any]:
    executor, options = host_executor(kit, host, runs_dir, inventory, options)
    assert isinstance(executor, HostExecutor)
    here = executor.transport.is_this_machine()
    where_host = "this machine" if here else _route(host, inventory, options)
    fingerprint = inventory_fingerprint(executor.host)
    code_dir = f"{executor.workdir}/code/{code_bundle()[1][:16]}"
    steps, planned_so_far = [], {}
    for step in kit.steps:
        planned = plan_step(step, kit, kits_dir, fingerprint, planned_so_far, host=executor.host)
        planned_so_far[step.name] = StepEntry(step.name, step.uses, status=StepStatus.OK)  # as if it ran: its inputs
        on_host = planned.kind.where == "host"
        command = None
        if on_host and not planned.skip_reason:
            place = StepPlace(RUN_ID, step.name, f"{executor.run_dir(RUN_ID)}/{step.name}", code_dir,
                              models_present=True, with_secrets=bool(kit.secrets))
            command = executor.runtime.command(planned.kind.module, step.image, place)  # a missing image refuses here
        container = on_host and executor.runtime.in_container
        steps.append({
            "name": step.name,
            "uses": step.uses,
            "runs_on": (where_host + (" in a container" if container else " natively")) if on_host
            else "the control plane (on the pulled-back files)",
            "image": {"name": step.image, "reference": options.images.get(step.image or "")} if container else None,
            "timeout_s": step.timeout,
            "params": planned.params,
            "not_run": planned.skip_reason,
            "command": command,
            "uploads": (["params.json"] + ([f"secrets as a mode-0600 file: {', '.join(kit.secrets)}"] if kit.secrets else []))
            if command else [],
            "pulls_back": [f"steps/{step.name}/ ({', '.join(step.keep)})"] if command else [],
        })
    return {
        "host": host.name,
        "connection": host.connection,
        "launcher": executor.launcher.kind,
        "runtime": host.runtime,
        "lock": executor.host_lock(RUN_ID).lock_dir,
        "uploads": [f"workload code (reprokit/workloads, {len(code_bundle()[0])} B tar.gz) to {code_dir}"],
        "record": str(runs_dir / RUN_ID) + "/",
        "steps": [{"name": "fingerprint", "uses": "fingerprint", "runs_on": where_host, "image": None, "timeout_s": None,
                   "params": {}, "not_run": None, "command": None, "uploads": [], "pulls_back": []}, *steps],
    }


def render_plan(plan: dict[str, Any]) -> str:
    lines = [f"plan of kit {plan['kit']} ({plan['kit_path']}), dry run: nothing is connected, run or written"]
    selection = plan["selection"]
    if any(selection.values()):
        lines.append(f"  selection: {selection}")
    for host in plan["hosts"]:
        lines.append(f"host {host['host']} ({host['connection']}, {host['launcher']} launcher, {host['runtime']} runtime);"
                     f" lock {host['lock']}; record {host['record']}")
        for upload in host["uploads"]:
            lines.append(f"  upload: {upload}")
        for number, step in enumerate(host["steps"], start=1):
            image = f"; image {step['image']['name']} = {step['image']['reference']}" if step["image"] else ""
            timeout = f"; timeout {step['timeout_s']} s" if step["timeout_s"] else ""
            lines.append(f"  [{number}] {step['name']} ({step['uses']}) on {step['runs_on']}{image}{timeout}")
            if step["not_run"]:
                lines.append(f"      {step['not_run']}")
            if step["params"]:
                lines.append(f"      with: {step['params']}")
            if step["command"]:
                lines.append(f"      command: {step['command']}")
            for upload in step["uploads"]:
                lines.append(f"      upload: {upload}")
            for pulled in step["pulls_back"]:
                lines.append(f"      pull back: {pulled}")
    lines.append(f"then: judge {plan['expectations']} expectation(s), write report.md and report.html")
    return "\n".join(lines)
