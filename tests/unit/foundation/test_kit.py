import shutil
from pathlib import Path

import pytest

from reprokit.config.kit import load_kit, load_kit_file
from reprokit.errors import ConfigError, ExitCode
from reprokit.step_kinds import STEP_KINDS
from tests.conftest import run_invoke


def kit_file(tmp_path: Path, text: str, name: str = "demo") -> Path:
    path = tmp_path / f"{name}.yml"
    path.write_text(text)
    return path


BASE = """\
kit: demo
description: a demo kit
pins:
  torch: "2.9.1"
  cuda: "12.9.1"
steps:
  - name: probe
    uses: smem-probe
    timeout_s: 60
expect:
  - name: at-limit
    step: probe
    path: devices[*].launch_at_optin_limit.ok
    equals: true
"""


SHIPPED = sorted(path.stem for path in (Path(__file__).resolve().parents[3] / "kits").glob("*.yml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_each_shipped_kit_loads_by_its_name(repo, name):
    kit, path = load_kit(name, repo / "kits")
    assert kit.kit == name and path == repo / "kits" / f"{name}.yml" and kit.steps


def test_shipped_kits_load(repo):
    assert {"smem-probe", "tile-sweep", "ep8-crash"} <= set(SHIPPED)
    kit, _ = load_kit("ep8-crash", repo / "kits")
    assert kit.pins == {"cuda": "12.9.1", "torch": "2.9.1", "sglang": "0.5.9",
                        "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3"}
    assert [s.uses for s in kit.steps] == ["smem-probe", "static-smem", "tile-sweep", "serve", "triage"]
    serve = kit.steps[3]
    assert (serve.with_["tp"], serve.with_["ep"], serve.with_["moe_runner_backend"]) == (8, 8, "flashinfer_cutlass")


def test_valid_kit(tmp_path):
    kit = load_kit_file(kit_file(tmp_path, BASE))
    assert kit.steps[0].timeout == 60
    assert kit.expect[0].operator == "equals"


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("    timeout_s: 60\n", "    timeout_s: 60\n    retries: 3\n",
         "demo.yml:10: unknown key 'steps[0].retries'; known keys here: name, uses, image, timeout_s, with, keep"),
        ("    timeout_s: 60\n", "    timeout_s: sixty\n",
         "demo.yml:9: field 'steps[0].timeout_s': Input should be a valid integer, unable to parse string as an integer (got 'sixty')"),
        ("description: a demo kit\n", "",
         "demo.yml:1: missing required field 'description'; add it"),
        ("  torch: \"2.9.1\"\n", "",
         "demo.yml:3: missing pin 'pins.torch', needed by step 'probe' (uses: smem-probe); add it with an exact version"),
        ("  torch: \"2.9.1\"\n", "  torch: \">=2.9\"\n",
         "demo.yml:3: field 'pins': pin 'torch' must be an exact version such as 0.6.3, got '>=2.9'"),
        ("    uses: smem-probe\n", "    uses: smem-prob\n",
         "demo.yml:8: field 'steps[0].uses': unknown step kind 'smem-prob'; known kinds: " + ", ".join(STEP_KINDS)),
        ("    equals: true\n", "",
         "demo.yml:11: field 'expect[0]': give exactly one of equals, one_of, at_least, at_most, contains_all, matches, equals_by_arch, reference (have none)"),
        ("    equals: true\n", "    equals: true\n    at_least: 1\n",
         "demo.yml:11: field 'expect[0]': give exactly one of equals, one_of, at_least, at_most, contains_all, matches, equals_by_arch, reference (have equals, at_least)"),
        ("    step: probe\n", "    step: sweep\n",
         "demo.yml:12: expectation 'at-limit' names unknown step 'sweep'; steps: probe"),
        ("    path: devices[*].launch_at_optin_limit.ok\n", "    path: devices[x].ok\n",
         "demo.yml:13: field 'expect[0].path': bad result path 'devices[x].ok'; write keys with dots and list items as [0] or [*]"),
        ("kit: demo\n", "kit: other\n",
         "demo.yml:1: kit name 'other' must match the file name 'demo'"),
        ("    timeout_s: 60\n", "    timeout_s: 60\n    with: {tp: 8}\n",
         "demo.yml:7: field 'steps[0]': unknown parameter 'tp' in 'with' of step 'probe' (smem-probe); known parameters: device_indices"),
        ("  cuda: \"12.9.1\"\n", "  cuda: \"12.9.1\"\n  cuda: \"12.8.0\"\n",
         "demo.yml:6: duplicate key 'pins.cuda' (first defined on line 5); keep one of them"),
    ],
)
def test_bad_kits_name_file_line_and_field(tmp_path, old, new, message):
    assert old in BASE
    path = kit_file(tmp_path, BASE.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_kit_file(path)
    assert str(err.value) == f"{tmp_path}/{message}"


def test_duplicate_step_names(tmp_path):
    text = BASE.replace("expect:", "  - name: probe\n    uses: smem-probe\nexpect:")
    with pytest.raises(ConfigError) as err:
        load_kit_file(kit_file(tmp_path, text))
    assert str(err.value) == f"{tmp_path}/demo.yml:10: duplicate step name 'probe'; step names must be unique"


def test_unknown_kit_lists_known_ones(repo, tmp_path):
    with pytest.raises(ConfigError) as err:
        load_kit("ep8-crsh", repo / "kits")
    shipped = ", ".join(sorted(p.stem for p in (repo / "kits").glob("*.yml")))  # kits are added over time
    assert "ep8-crash, " in shipped and "smem-probe, tile-sweep" in shipped
    assert str(err.value) == (f"{repo / 'kits'}: unknown kit 'ep8-crsh' (did you mean 'ep8-crash'?);"
                              f" known kits: {shipped}")
    with pytest.raises(ConfigError, match="unknown kit '../etc/passwd'"):
        load_kit("../etc/passwd", repo / "kits")


def test_loading_writes_nothing(repo, tmp_path):
    kits = tmp_path / "kits"
    shutil.copytree(repo / "kits", kits)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    (kits / "smem-probe.yml").write_text((kits / "smem-probe.yml").read_text().replace("steps:", "stepz:"))
    with pytest.raises(ConfigError):
        load_kit("smem-probe", kits)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_an_unknown_kit_name_with_esc_and_newlines_is_one_visible_line():
    proc = run_invoke("repro", "smem\x1b[31mprobe\nx\x1b]0;title\x07", "--host", "local")
    assert proc.returncode == ExitCode.BAD_INPUT
    assert len(proc.stderr.splitlines()) == 1 and "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert proc.stderr.startswith("error: kits: unknown kit 'smem\\x1b[31mprobe\\x0ax\\x1b]0;title\\x07'; known kits: ")
