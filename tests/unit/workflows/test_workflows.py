"""The GitOps workflows: valid against GitHub's schema, clean under zizmor, pinned, bounded, one `./dev` line per step."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_both_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["ci.yml", "fit-table.yml", "repro.yml"]


def test_schema_valid_offline():
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


def test_zizmor_finds_nothing_offline():
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed in this environment")
    proc = subprocess.run([zizmor, "--offline", "--no-progress", str(REPO / ".github" / "workflows")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_pinned_jobs_bounded_steps_one_line(path):
    data = load(path)
    for name, job in data["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {name} has no timeout-minutes"
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            if "run" in step:
                run = step["run"].strip()
                assert "\n" not in run, f"{path.name}: a multi-line run step: {run!r}"
                assert re.match(r"(sudo [^ ]+ )?\./dev (invoke|test|lint)\b", run), run
                assert "${{" not in run, f"{path.name}: expression inside run (template injection): {run!r}"


def test_repro_workflow_contract():
    data = load(REPO / ".github" / "workflows" / "repro.yml")
    on = data["on"]
    assert on["push"]["paths"] == ["kits/**", "docker/**", "inventory.yml"]
    assert set(on["workflow_dispatch"]["inputs"]) == {"kit", "host"}
    assert data["permissions"] == {"contents": "read"}
    # a push runs the kits it changed: the plan job computes them, the matrix runs them
    plan = data["jobs"]["plan"]
    assert plan["outputs"]["kits"] == "${{ steps.changed.outputs.kits }}"
    assert next(s for s in plan["steps"] if s.get("uses", "").startswith("actions/checkout@"))["with"]["fetch-depth"] == 0
    changed = next(s for s in plan["steps"] if s.get("id") == "changed")
    assert changed["run"].startswith("./dev invoke changed-kits --base \"$BASE\" --head \"$HEAD_SHA\" --kit \"$KIT\"")
    assert plan["env"] == {"BASE": "${{ github.event.before }}", "HEAD_SHA": "${{ github.sha }}", "KIT": "${{ inputs.kit }}"}
    job = data["jobs"]["repro"]
    assert job["needs"] == "plan" and job["if"] == "needs.plan.outputs.kits != '[]'"
    assert job["strategy"]["matrix"]["kit"] == "${{ fromJSON(needs.plan.outputs.kits) }}"
    assert job["strategy"]["max-parallel"] == 1 and job["strategy"]["fail-fast"] is False
    assert job["concurrency"]["cancel-in-progress"] is False and "inputs.host" in job["concurrency"]["group"]
    assert job["runs-on"] == ["self-hosted", "linux", "x64", "gpu", "sm120"]
    assert job["env"]["KIT"] == "${{ matrix.kit }}"
    # the host: the dispatch's input, else the repository variable a push runs on, else the runner's own machine;
    # the job's name, its env and its concurrency group say the same
    host = "inputs.host || vars.REPRO_HOST || 'local'"
    assert job["env"]["HOST"] == f"${{{{ {host} }}}}"
    assert job["name"] == f"${{{{ matrix.kit }}}} on ${{{{ {host} }}}}"
    assert job["concurrency"]["group"] == f"repro-${{{{ {host} }}}}-${{{{ github.repository }}}}"
    names = [s.get("name", s.get("uses", "")) for s in job["steps"]]
    # the verdict step decides the job's status, after the summary and the upload, whatever the run did
    reproduce = next(s for s in job["steps"] if s.get("run", "").startswith("./dev invoke repro "))
    assert reproduce["continue-on-error"] is True
    assert reproduce["env"] == {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"}  # only the step that needs it
    verdict = job["steps"][-1]
    assert verdict["run"] == './dev invoke ci-verdict --runs-dir "$RUNS_DIR"' and verdict["if"] == "always()"
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert "${{ github.run_id }}-${{ github.run_attempt }}" in upload["with"]["name"]
    assert upload["if"] == "always()"
    summary = next(s for s in job["steps"] if "summary" in s.get("run", ""))
    assert '"$GITHUB_STEP_SUMMARY"' in summary["run"] and summary["if"] == "always()"
    assert names.index(summary["name"]) < names.index(verdict["name"])


def test_every_invoke_task_a_workflow_calls_exists():
    listed = subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "--list", "--list-format=json"],
                            capture_output=True, text=True, cwd=REPO).stdout
    tasks = {task["name"] for task in json.loads(listed)["tasks"]}  # the developers' tasks too (not in the text list)
    for path in WORKFLOWS:
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                found = re.search(r"\./dev invoke ([\w-]+)", step.get("run", ""))
                if found:
                    assert found.group(1) in tasks, f"{path.name} calls unknown task {found.group(1)}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_setup_python(path):
    """ubuntu-24.04 and the self-hosted runners have a python3 that ./dev accepts (>= 3.11; ./dev says so if not)."""
    uses = [step.get("uses", "") for job in load(path)["jobs"].values() for step in job["steps"]]
    assert not [u for u in uses if u.startswith("actions/setup-python@")]
