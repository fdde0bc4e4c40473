"""The project as a git repository with history, the runner's venv and environment, for the workflows under act.

The repository under test is this checkout, history and uncommitted changes included, on `main`; each test clones
it and pushes its own commits, so `github.event.before` and `github.sha` are real commits of a real history. The runner keeps one venv made from requirements.lock (REPROKIT_VENV in its `.env`, as
a self-hosted runner's would), so `./dev invoke` does not rebuild it in every job's fresh workspace.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

GIT_ID = ["-c", "user.name=reprokit tests", "-c", "user.email=tests@reprokit.invalid", "-c", "commit.gpgsign=false"]
REMOTE = "https://github.com/reprokit/reprokit.git"  # github.repository as act reads it; never contacted

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *GIT_ID, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture(scope="session")
def origin(tmp_path_factory) -> Path:
    """This checkout as a repository: its history, and its uncommitted changes as one more commit on `main`."""
    repo = tmp_path_factory.mktemp("origin") / "reprokit"
    git(repo.parent, "clone", "-q", str(REPO), str(repo))
    git(repo, "checkout", "-q", "-B", "main")

    def listed(*args: str) -> list[str]:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", *args], capture_output=True, check=True).stdout
        return [name for name in out.decode().split("\0") if name]

    for name in listed("--deleted"):
        (repo / name).unlink(missing_ok=True)
    for name in listed("--modified", "--others", "--exclude-standard"):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    git(repo, "add", "-A")
    if git(repo, "status", "--porcelain"):
        git(repo, "commit", "-q", "-m", "the working tree's changes")
    return repo


@pytest.fixture
def checkout(origin: Path, tmp_path: Path) -> Path:
    """A clone of the project whose `origin` is GitHub's address (act names the repository from it)."""
    repo = tmp_path / "reprokit"
    git(tmp_path, "clone", "-q", str(origin), str(repo))
    git(repo, "remote", "set-url", "origin", REMOTE)
    return repo


def push(repo: Path, change: Callable[[Path], None], message: str) -> dict:
    """Commit ``change`` on `main` and return the push event GitHub would send for it."""
    before = git(repo, "rev-parse", "HEAD")
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    after = git(repo, "rev-parse", "HEAD")
    return {"ref": "refs/heads/main", "before": before, "after": after,
            "repository": {"full_name": "reprokit/reprokit", "default_branch": "main"}}


@pytest.fixture(scope="session")
def runner_venv(tmp_path_factory) -> Path:
    """The runner's venv, from requirements.lock as `./dev invoke` makes it (its stamp says which lock)."""
    venv = tmp_path_factory.mktemp("runner") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--require-hashes", "--no-deps", "-r", str(REPO / "requirements.lock")], check=True,
                   capture_output=True, timeout=600)
    shutil.copy(REPO / "requirements.lock", venv / ".installed-requirements.lock")
    return venv


def runner_env(repo: Path, tmp: Path, venv: Path | None, **extra: str) -> dict[str, str]:
    """The self-hosted runner's environment: where the checkout double reads and the upload double writes, the venv,
    and reprokit's own settings (INVOKE_REPROKIT_INVENTORY, ...) given as ``extra``."""
    env = {"CHECKOUT_DOUBLE_SOURCE": str(repo), "ARTIFACT_DOUBLE_DIR": str(tmp / "artifacts"), **extra}
    if venv is not None:
        env["REPROKIT_VENV"] = str(venv)
    return env


def uploaded_record(tmp: Path, artifact: str, runs_dir: str) -> Path:
    """The one run record of an artifact the upload double stored (``runs_dir``: the job's RUNS_DIR, relative)."""
    root = tmp / "artifacts" / artifact / Path(runs_dir).name
    entries = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
    records = [root / name for name in entries if (root / name / "manifest.json").is_file()]
    assert len(records) == 1, f"{root}: expected one record, found {entries}"
    return records[0]
