"""The workflow's own steps, offline: which kits a push changed (real git), annotations and the job's status."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reprokit.commands.ci import changed_kits_command, ci_verdict_command
from reprokit.errors import ConfigError, ExitCode
from reprokit.records.atomic import write_json_atomic
from reprokit.records.models import StepEntry
from reprokit.records.run_dir import RunRecord
from reprokit.report.ci import annotations, changed_kits

REPO = Path(__file__).resolve().parents[3]
ALL = sorted(path.stem for path in (REPO / "kits").glob("*.yml"))  # every shipped kit


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git repository with this project's kits, one commit."""
    shutil.copytree(REPO / "kits", tmp_path / "kits")
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "serve.Dockerfile").write_text("FROM scratch\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "kits")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def commit(repo: Path, path: str, text: str) -> str:
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"change {path}")
    return git(repo, "rev-parse", "HEAD")


def test_a_push_runs_the_kits_it_changed(checkout, capsys, tmp_path):
    base = git(checkout, "rev-parse", "HEAD")
    head = commit(checkout, "kits/smem-probe.yml", (checkout / "kits/smem-probe.yml").read_text() + "# a comment\n")
    out = tmp_path / "github_output"
    assert changed_kits_command(base, head, "kits", github_output=str(out)) == ExitCode.PASS
    assert capsys.readouterr().out == '["smem-probe"]\n'
    assert out.read_text() == 'kits=["smem-probe"]\n'


@pytest.mark.parametrize(("changed", "kits"), [
    (["kits/tile-sweep.yml"], ["tile-sweep"]),
    (["kits/models/glm-5.yml"], ["ep8-crash", "ep8-crash-fixed", "tile-sweep"]),  # every kit whose steps use the model
    (["docker/serve.Dockerfile"], ALL),
    (["inventory.yml"], ALL),
    (["kits/gone.yml"], []),  # a deleted kit has nothing to run
    (["README.md"], []),
])
def test_which_kits_a_change_touches(changed, kits, monkeypatch):
    monkeypatch.chdir(REPO)  # git names paths from the repository's root, as the kits directory is given
    assert changed_kits(changed, Path("kits")) == kits


def test_by_hand_one_kit_and_a_new_branch_every_kit(checkout, capsys):
    assert changed_kits_command("", "HEAD", "kits", kit="ep8-crash") == ExitCode.PASS
    assert changed_kits_command("0" * 40, "HEAD", "kits") == ExitCode.PASS
    assert capsys.readouterr().out.splitlines() == ['["ep8-crash"]', json.dumps(ALL)]
    with pytest.raises(ConfigError, match=r"unknown kit 'ep8-crsh' \(did you mean 'ep8-crash'\?\)"):
        changed_kits_command("", "HEAD", "kits", kit="ep8-crsh")


def test_a_shallow_checkout_is_said_plainly(checkout):
    with pytest.raises(ConfigError) as err:
        changed_kits_command("1234567", "HEAD", "kits")
    assert str(err.value) == ("git diff 1234567..HEAD: fatal: ambiguous argument '1234567..HEAD': unknown revision or "
                              "path not in the working tree.; is the checkout deep enough (actions/checkout fetch-depth: 0)?")


NO_GPU = "no NVIDIA driver on this host (libcuda.so.1 not found); install the driver"


def record(runs: Path, run_id: str, verdict: str, statuses: dict[str, str], step_status: str = "not_run") -> Path:
    rec = RunRecord.create(runs, run_id, kit={"name": "ep8-crash"}, host={"name": "rtx-1"},
                           fingerprint={"devices": [], "gpu_reason": NO_GPU})
    rec.set_step(StepEntry("probe", "smem-probe", step_status, reason=f"not run: needs a CUDA GPU; {NO_GPU}"))
    expectations = [{"name": n, "step": "probe", "status": s, "expected": "", "observed": None,
                     "reason": f"applies to sm120; this host has no GPU ({NO_GPU})" if s == "INCONCLUSIVE" else
                     "102400 is not 101376" if s == "FAIL" else ""} for n, s in statuses.items()]
    held = sum(s != "PASS" for s in statuses.values())
    write_json_atomic(rec.dir / "verdict.json", {"verdict": verdict, "summary": f"{held} of {len(statuses)} expectations"
                                                 " could not be judged here", "expectations": expectations})
    rec.finish("complete")
    return rec.dir


def test_inconclusive_is_a_warning_with_its_reasons_said_once_and_the_job_succeeds(tmp_path, capsys):
    record(tmp_path, "r1", "INCONCLUSIVE", {"a": "INCONCLUSIVE", "b": "INCONCLUSIVE", "c": "INCONCLUSIVE", "d": "PASS"})
    assert ci_verdict_command(str(tmp_path)) == ExitCode.PASS
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("::warning title=ep8-crash on rtx-1: INCONCLUSIVE::3 of 4 expectations could not be judged here.%0A")
    assert line.count(NO_GPU) == 1
    assert line.endswith(f"%0Anote 1: no GPU here: 3 expectations need one: {NO_GPU}")
    assert "a: applies to sm120; this host has no GPU (note 1)%0A" in line
    assert ci_verdict_command(str(tmp_path), inconclusive_fails=True) == ExitCode.FAIL


def test_fail_is_an_error_per_expectation_and_fails_the_job(tmp_path):
    run = record(tmp_path, "r1", "FAIL", {"big-tiles": "FAIL", "small": "PASS", "x": "FAIL"})
    lines, word = annotations(run)
    assert word == "FAIL"
    assert lines == ["::error title=ep8-crash on rtx-1: FAIL::big-tiles: 102400 is not 101376",
                     "::error title=ep8-crash on rtx-1: FAIL::x: 102400 is not 101376"]
    assert ci_verdict_command(str(tmp_path)) == ExitCode.FAIL


def test_a_pass_says_nothing_a_step_error_or_no_record_fails(tmp_path, capsys):
    record(tmp_path / "ok", "r1", "PASS", {"a": "PASS"})
    assert ci_verdict_command(str(tmp_path / "ok")) == ExitCode.PASS
    assert capsys.readouterr().out == ""
    record(tmp_path / "broken", "r2", "PASS", {"a": "PASS"}, step_status="timeout")
    assert ci_verdict_command(str(tmp_path / "broken")) == ExitCode.FAIL
    assert ci_verdict_command(str(tmp_path / "nothing")) == ExitCode.FAIL
    assert capsys.readouterr().out.startswith("::error title=no run record::nothing was recorded under ")
