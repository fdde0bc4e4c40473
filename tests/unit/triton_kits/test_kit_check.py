"""`invoke kits --check` beyond the schema: implemented steps, expectation paths in result keys, images and pins."""

from __future__ import annotations

import shutil
from pathlib import Path

from reprokit.config.kit import load_kit
from reprokit.kits import kit_check
from tests.conftest import run_invoke

REPO = Path(__file__).resolve().parents[3]
KITS = REPO / "kits"


def test_the_repositorys_kits_have_no_structural_problem():
    for name in ("smem-probe", "tile-sweep", "ep8-crash", "triton-moe-configs", "triton-mla-decode"):
        kit, path = load_kit(name, KITS)
        problems, _ = kit_check.structure(kit, path)
        assert problems == [], name
    kit, path = load_kit("triton-moe-configs", KITS)
    assert kit_check.structure(kit, path)[1] == ("2 steps of implemented kinds; 8 expectation paths in their steps'"
                                                 " results; 1 images from pinned bases, agreeing with the pins")


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    kits = tmp_path / "kits"
    kits.mkdir(exist_ok=True)
    text = (KITS / f"{name}.yml").read_text()
    assert old in text
    (kits / f"{name}.yml").write_text(text.replace(old, new))
    return kits


def test_a_path_the_result_cannot_have_names_the_line_and_the_keys(tmp_path):
    kits = _copy(tmp_path, "triton-mla-decode", "    path: overflowing.sm120\n", "    path: overflow.sm120\n")
    kit, path = load_kit("triton-mla-decode", kits)
    problems, _ = kit_check.structure(kit, path)
    assert problems == [f"{path}:{line_of(path, 'path: overflow.sm120')}: expectation 'sglang-copy-fits-sm120-in-every-case': the result of step 'compile'"
                        " (triton-smem) has no key 'overflow'; its keys: package, version, wheel, wheel_sha256, source,"
                        " kernel, package_root, import_as, torch, triton, archs, limits_bytes, cases, by_case, overflowing"]


def test_an_image_whose_lock_disagrees_with_a_pin_or_is_missing(tmp_path):
    kits = _copy(tmp_path, "triton-mla-decode", 'triton: "3.5.1"', 'triton: "3.6.0"')
    kit, path = load_kit("triton-mla-decode", kits)
    assert kit_check.image_problems(kit, path) == [
        f"{path}:{line_of(path, 'dockerfile:')}: image 'workload': docker/requirements-workload.lock: pins triton==3.5.1, but kit 'triton-mla-decode'"
        " pins triton 3.6.0; re-lock the requirements (command in its header) or change the kit"]
    kits = _copy(tmp_path, "smem-probe", "docker/workload.Dockerfile", "docker/nothing.Dockerfile")
    kit, path = load_kit("smem-probe", kits)
    assert kit_check.image_problems(kit, path) == [
        f"{path}:{line_of(path, 'dockerfile:')}: image 'workload': docker/nothing.Dockerfile does not exist (relative to {REPO})"]


def test_invoke_kits_check_fails_on_a_problem_and_passes_a_clean_kit(tmp_path):
    kits = _copy(tmp_path, "triton-moe-configs", "    path: emitted_all_fit\n", "    path: emitted_every_fit\n")
    shutil.copy(KITS / "smem-probe.yml", kits)
    proc = run_invoke("kits", "--check", "--kits-dir", str(kits))
    assert proc.returncode == 1, proc.stderr
    # -K is the top layer: its two kits replace the built-in ones of the same names (the others are checked too)
    assert [line for line in proc.stdout.splitlines() if line.startswith(f"{kits}/")] == [
        f"{kits}/smem-probe.yml: 1 steps of implemented kinds; 4 expectation paths in their steps' results; 1 images"
        " from pinned bases, agreeing with the pins",
        f"{kits}/triton-moe-configs.yml:{line_of(kits / 'triton-moe-configs.yml', 'emitted_every_fit')}: expectation 'every-rewritten-configuration-fits-sm120': the result of step"
        " 'compile' (triton-moe-configs) has no key 'emitted_every_fit'; its keys: sglang, wheel, wheel_sha256, triton,"
        " compiled, archs, limits_bytes, defaults, defaults_overflowing, tuned, formula, emitted, emitted_all_fit"]
