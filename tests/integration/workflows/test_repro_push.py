"""repro.yml on a push, executed by act: the plan job's kits, the matrix legs, each leg's run on an SSH test host
reached from the runner (this machine), the job's conclusion per verdict, its annotations and its summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprokit.config.kit import kit_names
from reprokit.records.models import Word
from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.report.headline import WORDS
from tests.integration.remote.conftest import REASON, fake_python, host_workdir, known_hosts_for, write_inventory
from tests.integration.workflows.act import NO_ACT, Annotation, act
from tests.integration.workflows.conftest import push, runner_env, uploaded_record

pytestmark = pytest.mark.skipif(bool(NO_ACT or REASON), reason=NO_ACT or REASON or "")

STEPS = ["actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
         "Reproduce (its exit code is judged by the verdict step)", "Verdict, headline and tables to the job summary",
         "Upload the run record", "Annotations and the job's status from the verdict"]


def edit_kit(old: str, new: str):
    def change(repo: Path) -> None:
        kit = repo / "kits" / "smem-probe.yml"
        text = kit.read_text()
        assert old in text
        kit.write_text(text.replace(old, new))
    return change


TORCH_EXPECTATION = "  - name: torch-and-driver-agree\n    step: probe\n    path: devices[*].torch_matches_driver\n    equals: true\n"

# (the push's change to kits/smem-probe.yml, the verdict on the test host, the job's conclusion, the annotation)
VERDICTS = {
    "PASS": (edit_kit(TORCH_EXPECTATION, ""), "success", None),
    "INCONCLUSIVE": (edit_kit("timeout_s: 180", "timeout_s: 120"), "success", Annotation(
        "warning", "smem-probe on h1: INCONCLUSIVE",
        "1 of 4 expectations could not be judged here.\ntorch-and-driver-agree: step 'probe' could not tell"
        " devices[*].torch_matches_driver here (null)")),
    "FAIL": (edit_kit("sm120: 101376", "sm120: 101377"), "failure", Annotation(
        "error", "smem-probe on h1: FAIL", "optin-limit-of-the-arch: observed 101376")),
}


def run_push(checkout: Path, tmp_path: Path, venv: Path, change, host: str = "h1", known: Path | None = None,
             **act_args):
    event = push(checkout, change, "kits: smem-probe changed")
    work = host_workdir(host, f"act-push-{tmp_path.name[-20:]}")
    inventory = write_inventory(tmp_path / "inventory.yml", {host: {"workdir": work}})
    known = known or known_hosts_for(tmp_path / "known_hosts", host)
    env = runner_env(checkout, tmp_path, venv, INVOKE_REPROKIT_INVENTORY=str(inventory),
                     INVOKE_REPROKIT_KNOWN_HOSTS=str(known))
    return act(checkout, "push", "repro.yml", tmp_path / "act", runner_env=env, event_payload=event,
               variables={"REPRO_HOST": host}, **act_args), event


@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_a_push_changing_one_kit_runs_it_on_the_host_and_the_job_follows_the_verdict(verdict, checkout, tmp_path,
                                                                                     runner_venv):
    change, conclusion, annotation = VERDICTS[verdict]
    run, event = run_push(checkout, tmp_path, runner_venv, change)
    plan = run.job("plan")
    assert (plan.conclusion, plan.outputs) == ("success", {"kits": '["smem-probe"]'}), run.output[-3000:]
    leg = run.job("repro")
    assert (leg.name, leg.matrix, leg.conclusion) == ("repro/smem-probe on h1", {"kit": "smem-probe"}, conclusion)
    reproduce = "success" if verdict == "PASS" else "failure"  # its exit code (3 INCONCLUSIVE, 1 FAIL), continue-on-error
    verdict_step = "success" if conclusion == "success" else "failure"
    assert leg.steps == dict(zip(STEPS, ["success", reproduce, "success", "success", verdict_step])), leg.steps
    assert leg.annotations == ([annotation] if annotation else [])
    words = WORDS[Word(verdict)]  # the headline's: reproduced, not reproduced, can't tell here
    assert leg.summary.startswith(f"# smem-probe on h1: {words} ({verdict})\n\n**{words}")
    assert "## Expectations\n\n| expectation | step | status | expected | observed | reason | why |" in leg.summary
    assert run.returncode == (0 if conclusion == "success" else 1)
    # the record the leg uploaded: judged on the host the push named, of the pushed commit
    record = uploaded_record(tmp_path, "run-record-smem-probe-h1-1-1", "runs/1-1-smem-probe")
    manifest = load_manifest(record).to_json()
    assert (manifest["host"]["name"], manifest["host"]["connection"]) == ("h1", "ssh")
    assert manifest["source"] == {"git_commit": event["after"], "git_dirty": False, "kit_git_commit": event["after"],
                                  "ci_run_url": "https://github.com/reprokit/reprokit/actions/runs/1"}
    assert json.loads((record / "verdict.json").read_text())["verdict"] == verdict
    assert verify_record(record) == []


def test_a_push_the_host_refuses_records_nothing_and_fails_with_an_error(checkout, tmp_path, runner_venv):
    known = tmp_path / "empty_known_hosts"
    known.write_text("")  # h1's key is not known: the run stops before it starts
    run, _ = run_push(checkout, tmp_path, runner_venv, edit_kit("timeout_s: 180", "timeout_s: 120"), known=known)
    leg = run.job("repro")
    assert leg.conclusion == "failure"
    assert leg.steps[STEPS[1]] == "failure" and leg.steps[STEPS[3]] == "failure"  # if-no-files-found: error
    assert leg.annotations == [
        Annotation("error", "", "No files were found with the provided path: runs/1-1-smem-probe. No artifacts will be"
                                " uploaded."),  # the upload step's if-no-files-found: error
        Annotation("error", "no run record", "nothing was recorded under runs/1-1-smem-probe: the run stopped before"
                                             " it started (see the Reproduce step's log)")]
    assert f"error: host 'h1' (10.213.0.11:22): its host key is not in {known}" in "\n".join(leg.log)
    assert run.returncode == 1


def test_a_push_changing_no_kit_runs_no_repro_job(checkout, tmp_path, runner_venv):
    run, _ = run_push(checkout, tmp_path, runner_venv, lambda repo: (repo / "kits" / "triton-matmul-ogs.yml").unlink())
    plan = run.job("plan")
    assert (plan.conclusion, plan.outputs) == ("success", {"kits": "[]"})  # a deleted kit has nothing to run
    assert run.legs("repro") == []
    assert run.returncode == 0


@pytest.mark.parametrize("path", ["docker/workload.Dockerfile", "inventory.yml"])
def test_a_push_changing_docker_or_the_inventory_plans_every_kit(path, checkout, tmp_path, runner_venv):
    def change(repo: Path) -> None:
        with (repo / path).open("a") as fh:
            fh.write("# a comment is a change\n")
    event = push(checkout, change, f"{path} changed")
    env = runner_env(checkout, tmp_path, runner_venv)
    run = act(checkout, "push", "repro.yml", tmp_path / "act", runner_env=env, event_payload=event, job="plan")
    plan = run.job("plan")
    every_kit = kit_names(checkout / "kits")
    assert len(every_kit) == len(list((checkout / "kits").glob("*.yml"))) > 1  # each kit file, none left out
    assert (plan.conclusion, plan.outputs) == ("success", {"kits": json.dumps(every_kit)})


def test_the_hf_token_secret_reaches_the_workload_and_appears_nowhere(checkout, tmp_path, runner_venv):
    secret = "hf_ACTSECRET_5f0c2b9e1d7a"
    work = host_workdir("h4", f"act-secret-{tmp_path.name[-20:]}")
    body = ('    echo "token is $HF_TOKEN"; echo "$HF_TOKEN" > seen.txt;'
            ' printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
            " exit 0")
    python = fake_python(work, body)
    inventory = write_inventory(tmp_path / "inventory.yml", {"h4": {"workdir": work, "ansible_python_interpreter": python}})
    event = push(checkout, edit_kit("timeout_s: 180\n", "timeout_s: 180\nsecrets: [HF_TOKEN]\n"),
                 "kits: smem-probe needs the token")
    env = runner_env(checkout, tmp_path, runner_venv, INVOKE_REPROKIT_INVENTORY=str(inventory),
                     INVOKE_REPROKIT_KNOWN_HOSTS=str(known_hosts_for(tmp_path / "known_hosts", "h4")))
    run = act(checkout, "push", "repro.yml", tmp_path / "act", runner_env=env, event_payload=event,
              variables={"REPRO_HOST": "h4"}, secrets={"HF_TOKEN": secret})
    leg = run.job("repro")
    assert (leg.matrix, leg.conclusion) == ({"kit": "smem-probe"}, "failure")  # no devices in the result: FAIL
    assert [line for line in leg.log if "token is" in line] == ["      | token is ***"]  # streamed, redacted
    assert secret not in run.output
    record = uploaded_record(tmp_path, "run-record-smem-probe-h4-1-1", "runs/1-1-smem-probe")
    assert (record / "steps" / "probe" / "step.log").read_text() == "token is ***\n"
    assert (record / "steps" / "probe" / "seen.txt").read_text() == "***\n"  # the workload had it; the record has not
    assert load_manifest(record).to_json()["secrets"] == ["HF_TOKEN"]
    stored = [p for p in (tmp_path / "artifacts").rglob("*") if p.is_file()]
    assert len(stored) > 5 and not [p for p in stored if secret.encode() in p.read_bytes()]
    assert secret not in (tmp_path / "act" / "act.log").read_text()
