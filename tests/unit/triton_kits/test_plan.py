"""The planner completes the Triton steps from the kit's pins, and their wheel is a declared control-machine input."""

from __future__ import annotations

from pathlib import Path

from reprokit.config.kit import load_kit
from reprokit.plan.inputs import resolve_inputs
from reprokit.plan.planner import plan_step
from reprokit.records.fingerprint import Fingerprint

KITS = Path(__file__).resolve().parents[3] / "kits"


def test_the_pins_fill_the_release_and_the_pinned_wheel_is_staged(sglang_wheel, tmp_path):
    for name, key in (("triton-moe-configs", "sglang"), ("triton-mla-decode", "version")):
        kit, _ = load_kit(name, KITS)
        planned = plan_step(kit.steps[-1], kit, KITS, fingerprint=Fingerprint(), results={})
        assert planned.skip_reason is None  # no GPU needed: it compiles for the arch it names
        assert planned.params[key] == "0.5.9"
        files, reason = resolve_inputs(planned.kind, planned.params, {}, tmp_path)
        assert reason is None
        assert [(f.param, f.source, f.origin, f.keep_on_host) for f in files] == [
            ("wheel", sglang_wheel, f"control cache: {sglang_wheel.name}", True)]
