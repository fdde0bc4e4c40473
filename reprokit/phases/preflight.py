"""Preflight: the fingerprint workload runs first, and the host is checked against the pins and the inventory.

What it finds is the record's (``fingerprint``, ``pin_drift``, ``preflight_notes``) and the planner's: a host with
no GPU plans its GPU steps out, with the fingerprint's reason.
"""

from __future__ import annotations

from reprokit.config.kit import Kit
from reprokit.hosts.launch import StepSpec
from reprokit.phases.prepare import PreparedRun
from reprokit.phases.reporter import RunReporter
from reprokit.phases.steps import in_flight
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.run_dir import utc_now

FINGERPRINT_TIMEOUT_S = 120


def preflight(kit: Kit, run: PreparedRun, reporter: RunReporter) -> Fingerprint:
    """Fingerprint the host (in the first step's image), record it, and say what differs from pins and inventory."""
    record, executor = run.record, run.executor
    reporter.fingerprinting()
    first_image = next((s.image for s in kit.steps if s.image), None)
    fp_dir = record.dir / "fingerprint"
    fp_run = executor.run_step(StepSpec("reprokit.workloads.fingerprint", {}, fp_dir, fp_dir / "fingerprint.log",
                                        FINGERPRINT_TIMEOUT_S, "fingerprint", first_image, reporter.stream,
                                        on_launch=in_flight(record, "fingerprint", utc_now())))
    fingerprint = Fingerprint.of_workload(fp_run.result, fp_run.end_reason or fp_run.result_problem,
                                          str(fp_dir / "result.json"))
    drift = pin_drift(kit.pins, fingerprint.packages)
    record.update(fingerprint=fingerprint, pin_drift=drift, in_flight=None)
    reporter.pin_drift(drift)
    gpus = fingerprint.devices
    host = executor.host
    if host.gpu_count is not None and len(gpus) != host.gpu_count:
        note = (f"the inventory says {host.gpu_count} GPU(s) on {host.name}, the workloads see {len(gpus)}"
                + (" in their container: check the NVIDIA Container Toolkit (`invoke provision --check`)" if host.in_container else ""))
        record.update(preflight_notes=[note])
        reporter.preflight_note(note)
    reporter.fingerprinted(fingerprint)
    return fingerprint


def pin_drift(pins: dict[str, str], installed: dict[str, str | None]) -> dict[str, dict[str, str | None]]:
    """Pinned packages whose version on the host differs (the native runtime runs the host's own packages)."""
    return {
        name: {"pinned": version, "installed": installed[name]}
        for name, version in pins.items()
        if name in installed and installed[name] is not None and installed[name].split("+")[0] != version
    }
