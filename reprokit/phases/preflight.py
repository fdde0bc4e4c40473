"""Preflight: the fingerprint workload runs first, and the host is checked against the pins and the inventory.

What it finds is the record's (``fingerprint``, ``pin_drift``, ``preflight_notes``) and the planner's: a host with
no GPU plans its GPU steps out, with the fingerprint's reason.
"""

from __future__ import annotations

from reprokit.config.inventory import Host
from reprokit.config.kit import Kit
from reprokit.hosts.launch import StepSpec
from reprokit.phases.prepare import PreparedRun
from reprokit.phases.reporter import RunReporter
from reprokit.phases.steps import launched
from reprokit.records.events import Fingerprinted
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.run_dir import utc_now

FINGERPRINT_TIMEOUT_S = 120


def preflight(kit: Kit, run: PreparedRun, reporter: RunReporter) -> Fingerprint:
    """Fingerprint the host (in the first step's image), say what differs from pins and inventory, and record it all
    in one write (``Fingerprinted``)."""
    recorder, executor = run.recorder, run.executor
    reporter.fingerprinting()
    first_image = next((s.image for s in kit.steps if s.image), None)
    fp_dir = recorder.dir / "fingerprint"
    fp_run = executor.run_step(StepSpec("reprokit.workloads.fingerprint", {}, fp_dir, fp_dir / "fingerprint.log",
                                        FINGERPRINT_TIMEOUT_S, "fingerprint", first_image, reporter.stream,
                                        on_launch=launched(recorder, "fingerprint", utc_now())))
    fingerprint = Fingerprint.of_workload(fp_run.result, fp_run.end_reason or fp_run.result_problem,
                                          str(fp_dir / "result.json"))
    drift = pin_drift(kit.pins, fingerprint.packages)
    notes = gpu_count_notes(executor.host, len(fingerprint.devices))
    recorder.record(Fingerprinted(fingerprint, drift, notes))
    reporter.pin_drift(drift)
    for note in notes:
        reporter.preflight_note(note)
    reporter.fingerprinted(fingerprint)
    return fingerprint


def gpu_count_notes(host: Host, gpus_seen: int) -> list[str]:
    """The inventory's GPU count against what the workloads see, where they differ."""
    if host.gpu_count is None or gpus_seen == host.gpu_count:
        return []
    return [f"the inventory says {host.gpu_count} GPU(s) on {host.name}, the workloads see {gpus_seen}"
            + (" in their container: check the NVIDIA Container Toolkit (`invoke provision --check`)" if host.in_container else "")]


def pin_drift(pins: dict[str, str], installed: dict[str, str | None]) -> dict[str, dict[str, str | None]]:
    """Pinned packages whose version on the host differs (the native runtime runs the host's own packages)."""
    return {
        name: {"pinned": version, "installed": installed[name]}
        for name, version in pins.items()
        if name in installed and installed[name] is not None and not _same_release(version, installed[name])
    }


def _same_release(pinned: str, installed: str) -> bool:
    """A pin with a local label (``2.13.0+cpu``) names that build; one without (``2.13.0``) any build of it."""
    return installed == pinned or ("+" not in pinned and installed.split("+")[0] == pinned)
