"""`invoke new-kit NAME`: a skeleton from a step kind's declaration, that loads and passes the kit check as written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reprokit.config.kit import load_kit
from reprokit.errors import ConfigError
from reprokit.kits import kit_check
from reprokit.kits.new_kit import new_kit
from tests.conftest import run_invoke

KITS = Path(__file__).resolve().parents[3] / "kits"


def test_the_skeleton_loads_takes_the_other_kits_pin_and_passes_the_check(tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    shutil.copy(KITS / "ep8-crash.yml", kits)  # pins sglang 0.5.9
    proc = run_invoke("new-kit", "my-moe-case", "--kind", "triton-moe-configs", "--kits-dir", str(kits))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{kits}/my-moe-case.yml: written to the --kits-dir kits (step kind triton-moe-configs); next:"
                           " fill in description and expectations, then `reprokit kits --check` and"
                           " `reprokit --dry repro my-moe-case` (docs/adding-a-case.md)\n")
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
    with pytest.raises(ConfigError) as caught:  # one directory alone: no kit of it pins sglang
        new_kit("needs-sglang", "triton-moe-configs", kits, [])
    assert str(caught.value) == f"the step kind needs pin 'sglang' and no kit in {kits} pins it; give --pin sglang=VERSION"
    assert sorted(p.name for p in kits.iterdir()) == before


def test_with_kits_dir_the_pins_come_from_every_layer_and_the_kit_goes_to_that_dir(tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    proc = run_invoke("new-kit", "smem-probe-2", "--kits-dir", str(kits), "--json")  # -K: on top of the built-in kits
    assert (proc.returncode, json.loads(proc.stdout)["source"]) == (0, "-K"), proc.stderr
    proc = run_invoke("new-kit", "needs-sglang", "--kind", "triton-moe-configs", "--kits-dir", str(kits))
    assert proc.returncode == 0, proc.stderr  # the pin the built-in kits use (ep8-crash's sglang 0.5.9)
    assert load_kit("needs-sglang", kits)[0].pins == {"sglang": "0.5.9"}
    assert sorted(p.name for p in kits.iterdir()) == ["needs-sglang.yml", "smem-probe-2.yml"]
