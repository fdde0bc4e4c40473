"""The step-kind registry (reprokit/step_kinds/): what it finds, what it refuses, how a result is read back, and a
kind added as one module (its declaration) and its sections (one module of reprokit/report/kind_sections/) being planned,
checked and reported with no other file touched."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace

import pytest

import reprokit.report.kind_sections as sections_package
import reprokit.step_kinds as step_kinds_package
from reprokit.commands.run import run_exit_code
from reprokit.config.kit import load_kit_file
from reprokit.errors import ExitCode
from reprokit.kits.kit_check import expectation_problems
from reprokit.plan.inputs import resolve_inputs
from reprokit.plan.planner import plan_step
from reprokit.plan.results import checked_result
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import StepEntry
from reprokit.report import sections
from reprokit.step_kinds import (
    STEP_KINDS,
    Output,
    Result,
    ResultError,
    StepInput,
    StepKind,
    declaration_problems,
    discover,
)
from tests.conftest import REPO

KITS = REPO / "kits"
SM120 = Fingerprint.from_json({"devices": [{"index": 0, "gpu_arch": "sm120", "max_shared_memory_per_block_optin_bytes": 101376}]}, "test")


def test_the_kinds_in_their_declared_order_each_input_after_its_producer():
    assert list(STEP_KINDS) == sorted(STEP_KINDS, key=lambda name: (STEP_KINDS[name].order, name))
    position = {name: index for index, name in enumerate(STEP_KINDS)}
    late = [(kind.name, spec.from_step) for kind in STEP_KINDS.values() for spec in kind.inputs
            if spec.from_step is not None and position[spec.from_step] >= position[kind.name]]
    assert late == []  # `invoke kits` lists a producer before the kinds that read its outputs
    assert declaration_problems(STEP_KINDS) == []


@pytest.mark.parametrize("name", list(STEP_KINDS))
def test_each_kind_is_runnable_and_used_by_a_shipped_kit(name):
    kind = STEP_KINDS[name]
    assert kind.implemented and importlib.util.find_spec(kind.module) is not None, name
    if kind.where == "host":  # a workload, run as `python -m` on the host
        assert kind.module.startswith("reprokit.workloads."), kind.module
    else:  # a control step: the module's run_step
        assert callable(importlib.import_module(kind.module).run_step), kind.module
    assert issubclass(kind.result, Result) and set(kind.param_keys) >= {p.param for p in kind.pin_params}
    assert any(step.uses == name for path in sorted(KITS.glob("*.yml")) for step in load_kit_file(path).steps), (
        f"no kit in kits/ uses {name}")


def test_an_input_must_name_an_output_its_producer_declares():
    bad = StepKind(name="reader", where="host", summary="reads", order=99, module="x", implemented=True,
                   inputs=(StepInput("logs", "the logs", from_step="serve", files=("*.txt",)),
                           StepInput("other", "from nowhere", from_step="no-such-kind")))
    assert declaration_problems({**STEP_KINDS, "reader": bad}) == [
        "reader: input 'logs' names '*.txt', which serve does not declare among its outputs"
        " (**/*.log, **/*.log.gz, result.json)",
        "reader: input 'other' is from kind 'no-such-kind', which does not exist"]
    assert "**/*.log" in {o.files for o in STEP_KINDS["serve"].outputs}  # what the triage reads
    assert STEP_KINDS["static-smem"].outputs == (Output("result.json", STEP_KINDS["static-smem"].outputs[0].summary),)


@pytest.mark.parametrize(("kind", "result", "message"), [
    ("static-smem", {"status": "ok", "failing_tiles": "128x256x128"},
     "field 'failing_tiles': Input should be a valid list (got '128x256x128')"),
    ("static-smem", {"status": "ok", "rows": [{"tactic": 3}, 7]},
     "field 'rows[1]': Input should be a valid dictionary or instance of SmemRow (got 7)"),
    # nested parts the report reads by field: a wrong one names its path
    ("static-smem", {"status": "ok", "rows": [{"tactic": 0}, {}, {}, {"kernel_smem_bytes": "102400"}]},
     "field 'rows[3].kernel_smem_bytes': Input should be a valid integer (got '102400')"),
    ("tile-sweep", {"status": "ok", "best": [{"problem": "p1", "tflops": "fast"}]},
     "field 'best[0].tflops': Input should be a valid number (got 'fast')"),
    ("tile-sweep", {"status": "ok", "cross_check": {"checked": 57, "agreements": True}},
     "field 'cross_check.agreements': Input should be a valid integer (got True)"),
    ("serve", {"status": "ok", "telemetry": {"samples": [{"t_s": 0.0, "power_w": "235 W"}]}},
     "field 'telemetry.samples[0].power_w': Input should be a valid number (got '235 W')"),
    ("serve", {"status": "ok", "performance": {"by_concurrency": {"c32": {"concurrency": "32"}}}},
     "field 'performance.by_concurrency.c32.concurrency': Input should be a valid integer (got '32')"),
    ("triage", {"status": "ok", "autotune_failures": [{"tactic": 14, "count": 2.5}]},
     "field 'autotune_failures[0].count': Input should be a valid integer (got 2.5)"),
    ("triage", {"status": "ok", "timeline": [None]},
     "field 'timeline[0]': Input should be a valid dictionary or instance of TimelineEvent (got None)"),
    ("triton-smem", {"status": "ok", "by_case": {"bs16": {"sm120": {"fits": "yes"}}}},
     "field 'by_case.bs16.sm120.fits': Input should be a valid boolean (got 'yes')"),
    ("triton-moe-configs", {"status": "ok", "tuned": {"files": 3}},
     "field 'tuned.config_dirs': Field required (got nothing)"),
    ("smem-probe", {"status": "ok", "devices": [{"launch_at_optin_limit": {"ok": 1}}]},
     "field 'devices[0].launch_at_optin_limit.ok': Input should be a valid boolean (got 1)"),
    ("serve", {"outcome": "ready"}, "field 'status': Field required (got nothing)"),
    ("serve", {"status": "ok", "ready_after_s": "179"}, "field 'ready_after_s': Input should be a valid number (got '179')"),
    ("triage", [], "the result: Input should be a valid dictionary or instance of TriageResult (got [])"),
])
def test_a_result_that_does_not_match_its_model_is_one_line_naming_file_and_field(kind, result, message):
    where = "runs/r1/steps/x/result.json"
    with pytest.raises(ResultError) as caught:
        STEP_KINDS[kind].read_result(result, where)
    module = STEP_KINDS[kind].result.__module__.replace(".", "/")
    assert str(caught.value) == f"{where}: {message}; the {kind} result model ({module}.py) says what each field holds"


def test_a_failing_workloads_details_are_kept_and_its_step_is_an_error_when_a_field_is_wrong(tmp_path):
    probe = STEP_KINDS["smem-probe"].read_result({"status": "no_driver", "error": "no driver", "tried": ["a"]}, "r.json")
    assert probe.status == "no_driver" and probe.model_extra == {"tried": ["a"]}
    entry = StepEntry("sweep", "tile-sweep", status="ok", result_file="steps/sweep/result.json",
                      result={"status": "ok", "best": {"problem": "decode"}})
    checked = checked_result(STEP_KINDS["tile-sweep"], entry, tmp_path)
    assert (checked.status, checked.result) == ("error", None)
    assert checked.reason == (f"{tmp_path}/steps/sweep/result.json: field 'best': Input should be a valid list (got"
                              " {'problem': 'decode'}); the tile-sweep result model (reprokit/step_kinds/tile_sweep.py)"
                              " says what each field holds")
    assert checked_result(STEP_KINDS["tile-sweep"], StepEntry("sweep", "tile-sweep", status="timeout"), tmp_path).status \
        == "timeout"


def test_a_wrong_nested_field_is_the_steps_error_and_no_section_reads_it(tmp_path):
    result = json.loads((REPO / "tests/unit/report/fixtures/static-smem-0.6.3-sm120.result.json").read_text())
    assert sections.markdown({"smem": StepEntry("smem", "static-smem", "ok", result=result)}, "headline")[1] == \
        "## Shared memory on sm120: 2 kernel(s) over the 101 376 B limit"
    result["rows"][3]["kernel_smem_bytes"] = "102400"
    entry = StepEntry("smem", "static-smem", status="ok", result_file="steps/smem/result.json", result=result)
    checked = checked_result(STEP_KINDS["static-smem"], entry, tmp_path)
    assert (checked.status, checked.result) == ("error", None)
    assert checked.reason == (f"{tmp_path}/steps/smem/result.json: field 'rows[3].kernel_smem_bytes': Input should be a"
                              " valid integer (got '102400'); the static-smem result model"
                              " (reprokit/step_kinds/static_smem.py) says what each field holds")
    assert sections.markdown({"smem": checked}, "headline") == []
    # read back without that check (a record of an older reprokit), the result is not drawn either
    assert sections.markdown({"smem": entry}, "headline") == [] and sections.html({"smem": entry}, "details") == []


def test_every_committed_result_reads_back_into_its_kind():
    read = 0
    for manifest in sorted((REPO / "evidence").glob("*/*/manifest.json")):
        for step in json.loads(manifest.read_text())["steps"]:
            if step.get("result_file"):
                path = manifest.parent / step["result_file"]
                STEP_KINDS[step["uses"]].read_result(json.loads(path.read_text()), str(path))
                read += 1
    assert read == 62  # 28, evidence/catalogue's 22 (b12x 2, mxfp8 2, the vLLM kits' probes 2, matmul-ogs 1,
    # extend-attention's triton-smem 1, ep8-crash-fixed's probe and static-smem 2, the four Triton kits of 2026-12-06 4,
    # tilelang-prepare-h's tilelang-smem 2, the three vllm-cpu kits' serve-vllm-cpu and triage 6), h200-ssh-vllm's probes 2, h200-ssh-layout's 10 (probe 4, static-smem 3,
    # tile-sweep 3)


NEW_KIND = '''
"""``hello-smem``: a kind a test adds as one module; nothing else of reprokit changes."""

from reprokit.step_kinds.base import Output, Result, StepInput, StepKind


class HelloResult(Result):
    greeting: str | None = None
    bytes_said: int | None = None


KIND = StepKind(
    name="hello-smem", where="host", order=35, module="hello_workload", summary="says hello next to the limit",
    implemented=True, param_keys=("greeting", "bytes_said", "arch", "optin_limit_bytes"), host_arch_param="arch",
    optin_limit_param="optin_limit_bytes",
    inputs=(StepInput("predicted", "the static prediction", from_step="static-smem"),),
    outputs=(Output("result.json", "the greeting"),), result=HelloResult,
)
'''

NEW_SECTIONS = '''
"""The ``hello-smem`` kind's section of the reports, drawn from its result model."""

from markupsafe import Markup

from reprokit.draw.tables import html_table, md_table
from reprokit.report.kind_sections.base import ReportStep, Section
from reprokit.step_kinds.hello_smem import KIND


def markdown(step: ReportStep) -> list[str]:
    return ["", "## Hello", ""] + md_table(["step", "greeting"], [[step.name, step.result.greeting]])


def html(step: ReportStep) -> list[Markup]:
    return [Markup("<h2>Hello</h2>"), html_table(["step", "greeting"], [[step.name, step.result.greeting]], "hello")]


SECTIONS = (Section("findings", markdown=markdown, html=html),)
'''

KIT = """\
kit: hello
description: a kind added by a test
pins: {flashinfer-python: "0.6.3"}
steps:
  - {name: static-smem, uses: static-smem, with: {arch: host}}
  - {name: hello, uses: hello-smem, with: {greeting: hi, arch: host}}
expect:
  - {name: greets, step: hello, path: greeting, equals: hi}
  - {name: farewell, step: hello, path: farewell, equals: bye}
"""


@pytest.fixture
def hello_kind(tmp_path, monkeypatch):
    """``hello_smem.py`` in a directory of each package's path (the declaration, its sections): discovered,
    registered, gone after the test."""
    for package, source in ((step_kinds_package, NEW_KIND), (sections_package, NEW_SECTIONS)):
        folder = tmp_path / package.__name__.rsplit(".", 1)[-1]
        folder.mkdir()
        (folder / "hello_smem.py").write_text(source)
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
        monkeypatch.delitem(sys.modules, f"{package.__name__}.hello_smem", raising=False)
    found = discover(step_kinds_package.__path__)
    for name, kind in found.items():
        monkeypatch.setitem(STEP_KINDS, name, kind)
    for name, drawn in sections_package.discover(sections_package.__path__).items():
        monkeypatch.setitem(sections_package.KIND_SECTIONS, name, drawn)
    yield found
    for package in (step_kinds_package, sections_package):
        sys.modules.pop(f"{package.__name__}.hello_smem", None)


def test_a_kind_added_as_one_module_is_planned_checked_and_reported(hello_kind, tmp_path):
    assert list(hello_kind)[2:4] == ["tile-sweep", "hello-smem"]  # its declared order
    kit_path = tmp_path / "hello.yml"
    kit_path.write_text(KIT)
    kit = load_kit_file(kit_path)  # the kit schema takes its parameters
    hello = kit.steps[1]
    planned = plan_step(hello, kit, KITS, SM120, {})
    assert planned.params == {"greeting": "hi", "arch": "sm120", "optin_limit_bytes": 101376}
    record = tmp_path / "run"
    (record / "steps" / "static-smem").mkdir(parents=True)
    (record / "steps" / "static-smem" / "result.json").write_text('{"status": "ok"}')
    steps = {"static-smem": StepEntry("static-smem", "static-smem", status="ok")}
    files, reason = resolve_inputs(planned.kind, planned.params, steps, record)
    assert (reason, [f.origin for f in files]) == (None, ["step static-smem: result.json"])
    problems, checked = expectation_problems(kit, kit_path)
    assert checked == 2
    assert problems == [f"{kit_path}:9: expectation 'farewell': the result of step 'hello' (hello-smem) has no key"
                        " 'farewell'; its keys: greeting, bytes_said"]
    steps["hello"] = StepEntry("hello", "hello-smem", status="ok", result={"status": "ok", "greeting": "hi"})
    assert sections.markdown(steps, "findings") == ["", "## Hello", "", "| step | greeting |", "|---|---|",
                                                    "| hello | hi |"]
    assert sections.html(steps, "findings") == [
        "<h2>Hello</h2>", '<table id="hello"><thead><tr><th>step</th><th>greeting</th></tr></thead><tbody><tr>'
        "<td>hello</td><td>hi</td></tr></tbody></table>"]
    with pytest.raises(ResultError, match="field 'bytes_said': Input should be a valid integer"):
        STEP_KINDS["hello-smem"].read_result({"status": "ok", "bytes_said": "3"}, "r.json")


HELLO_WORKLOAD = '''
"""The hello-smem kind's workload: params.json in, result.json out, as every workload."""
from reprokit.workloads.contract import main


def run(params, out_dir):
    return {"greeting": params["greeting"], "bytes_said": params.get("bytes_said", 2)}


if __name__ == "__main__":
    raise SystemExit(main("hello", run))
'''

RUN_KIT = """\
kit: hello-run
description: a kind added by a test, run on this machine
pins: {}
steps:
  - {name: hello, uses: hello-smem, with: {greeting: hi%s}}
expect:
  - {name: greets, step: hello, path: greeting, equals: hi}
"""


@pytest.mark.parametrize(("extra", "verdict", "exit_code"), [("", "PASS", ExitCode.PASS),
                                                             (", bytes_said: '3'", "INCONCLUSIVE", ExitCode.STEP_ERROR)])
def test_a_kind_added_as_one_module_runs_through_the_real_runner(hello_kind, tmp_path, monkeypatch, extra, verdict,
                                                                 exit_code):
    """The local host runs the kind's workload (the real fingerprint and runner): its section is in both reports;
    a result whose field does not match the kind's model is the step's error, one line naming file and field."""
    from reprokit.config.inventory import local_host
    from reprokit.run.kit_run import run_kit

    monkeypatch.setitem(STEP_KINDS, "hello-smem", replace(STEP_KINDS["hello-smem"], inputs=()))
    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "hello_workload.py").write_text(HELLO_WORKLOAD)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "workloads"))
    kit_path = tmp_path / "hello-run.yml"
    kit_path.write_text(RUN_KIT % extra)
    outcome = run_kit(load_kit_file(kit_path), kit_path, local_host(), tmp_path / "runs", KITS, say=lambda _: None)
    assert (outcome.verdict.verdict, run_exit_code(outcome)) == (verdict, exit_code)
    report_md = (outcome.run_dir / "report.md").read_text()
    report_html = (outcome.run_dir / "report.html").read_text()
    if not extra:
        assert "\n## Hello\n\n| step | greeting |\n|---|---|\n| hello | hi |\n" in report_md
        assert '<h2>Hello</h2><table id="hello">' in report_html.replace("\n", "")
        return
    reason = (f"{outcome.run_dir}/steps/hello/result.json: field 'bytes_said': Input should be a valid integer (got"
              " '3'); the hello-smem result model (reprokit/step_kinds/hello_smem.py) says what each field holds")
    (entry,) = [s for s in json.loads((outcome.run_dir / "manifest.json").read_text())["steps"] if s["name"] == "hello"]
    assert (entry["status"], entry["reason"]) == ("error", reason)
    assert "## Hello" not in report_md and "| hello | hello-smem | error |" in report_md


def test_a_module_without_a_kind_or_with_a_taken_name_stops_the_registry(tmp_path, monkeypatch):
    (tmp_path / "kinds").mkdir()
    (tmp_path / "kinds" / "notes_only.py").write_text('"""Not a kind."""\n')
    (tmp_path / "kinds" / "serve_again.py").write_text(
        "from dataclasses import replace\nfrom reprokit.step_kinds.serve import KIND as SERVE\nKIND = replace(SERVE, order=1)\n")
    monkeypatch.setattr(step_kinds_package, "__path__", [*step_kinds_package.__path__, str(tmp_path / "kinds")])
    for name in ("notes_only", "serve_again"):
        monkeypatch.delitem(sys.modules, f"reprokit.step_kinds.{name}", raising=False)
    with pytest.raises(ValueError) as caught:
        discover(step_kinds_package.__path__)
    assert str(caught.value) == ("step kinds: reprokit.step_kinds.notes_only defines no KIND (a StepKind);"
                                 " reprokit.step_kinds.serve_again: a second kind named 'serve'")
    for name in ("notes_only", "serve_again"):
        sys.modules.pop(f"reprokit.step_kinds.{name}", None)


def test_a_sections_module_without_its_names_a_second_one_or_an_unknown_kind_stops_the_registry(tmp_path, monkeypatch):
    (tmp_path / "drawn").mkdir()
    (tmp_path / "drawn" / "notes_only.py").write_text('"""Not sections."""\n')
    (tmp_path / "drawn" / "serve_again.py").write_text(
        "from reprokit.report.kind_sections.serve import SECTIONS\nfrom reprokit.step_kinds.serve import KIND\n")
    (tmp_path / "drawn" / "ghost.py").write_text(
        "from dataclasses import replace\nfrom reprokit.step_kinds.serve import KIND as SERVE\n"
        "KIND = replace(SERVE, name='ghost')\nSECTIONS = ()\n")
    monkeypatch.setattr(sections_package, "__path__", [*sections_package.__path__, str(tmp_path / "drawn")])
    for name in ("notes_only", "serve_again", "ghost"):
        monkeypatch.delitem(sys.modules, f"reprokit.report.kind_sections.{name}", raising=False)
    with pytest.raises(ValueError) as caught:
        sections_package.discover(sections_package.__path__)
    assert str(caught.value) == (
        "report sections: reprokit.report.kind_sections.ghost: draws kind 'ghost', which reprokit/step_kinds/ does not declare;"
        " reprokit.report.kind_sections.notes_only defines no KIND (the StepKind it draws) and SECTIONS (a tuple);"
        " reprokit.report.kind_sections.serve_again: a second module drawing kind 'serve'")
    for name in ("notes_only", "serve_again", "ghost"):
        sys.modules.pop(f"reprokit.report.kind_sections.{name}", None)
