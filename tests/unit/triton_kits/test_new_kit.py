"""`invoke new-kit NAME`: a skeleton from a step kind's declaration, that loads and passes the kit check as written."""

from __future__ import annotations

import shutil
from pathlib import Path

from reprokit import kit_check
from reprokit.config.kit import load_kit
from tests.conftest import run_invoke

KITS = Path(__file__).resolve().parents[3] / "kits"


def test_the_skeleton_loads_takes_the_other_kits_pin_and_passes_the_check(tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    shutil.copy(KITS / "ep8-crash.yml", kits)  # pins sglang 0.5.9
    proc = run_invoke("new-kit", "my-moe-case", "--kind", "triton-moe-configs", "--kits-dir", str(kits))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{kits}/my-moe-case.yml: written (step kind triton-moe-configs); next: fill in description"
                           " and expectations, then `invoke kits --check` and `invoke --dry repro my-moe-case`"
                           " (docs/adding-a-case.md)\n")
    kit, path = load_kit("my-moe-case", kits)
    assert (kit.pins, [s.uses for s in kit.steps], [e.path for e in kit.expect]) == (
        {"sglang": "0.5.9"}, ["triton-moe-configs"], ["status"])
    assert kit_check.structure(kit, path)[0] == []
    assert "#   defaults_overflowing" in path.read_text()  # the result keys an expectation may start at


def test_an_existing_kit_a_bad_name_or_an_unknown_pin_is_exit_2_and_writes_nothing(tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    shutil.copy(KITS / "smem-probe.yml", kits)
    before = sorted(p.name for p in kits.iterdir())
    proc = run_invoke("new-kit", "smem-probe", "--kits-dir", str(kits))
    assert (proc.returncode, proc.stderr.strip()) == (
        2, f"error: {kits}/smem-probe.yml: exists already; choose another name or edit that kit")
    proc = run_invoke("new-kit", "Bad_Name", "--kits-dir", str(kits))
    assert (proc.returncode, proc.stderr.strip()) == (
        2, "error: kit name 'Bad_Name': use lower-case letters, digits and '-' (e.g. triton-moe-configs)")
    proc = run_invoke("new-kit", "needs-sglang", "--kind", "triton-moe-configs", "--kits-dir", str(kits))
    assert (proc.returncode, proc.stderr.strip()) == (
        2, f"error: the step kind needs pin 'sglang' and no kit in {kits} pins it; give --pin sglang=VERSION")
    assert sorted(p.name for p in kits.iterdir()) == before
