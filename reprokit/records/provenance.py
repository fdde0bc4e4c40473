"""Where a run came from: the git commit of the checkout (tool and kits live in one repository), the last
commit of the kit file, whether the tree had local changes, and under GitHub Actions the workflow run's URL.

Read once when a record is created; anything git cannot say (no git, not a checkout, a tarball) is None,
never an error: a run does not depend on being in a repository.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

GIT_TIMEOUT_S = 5


def _git(*args: str, cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def ci_run_url(env: dict[str, str] | None = None) -> str | None:
    """GitHub Actions' own variables give the run's page: server/repository/actions/runs/id[/attempts/n]."""
    env = dict(os.environ) if env is None else env
    server, repository, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    if not (server and repository and run_id):
        return None
    attempt = env.get("GITHUB_RUN_ATTEMPT")
    return f"{server}/{repository}/actions/runs/{run_id}" + (f"/attempts/{attempt}" if attempt and attempt != "1" else "")


def source_provenance(kit_path: str | Path | None = None, cwd: Path | None = None) -> dict[str, Any]:
    cwd = Path(cwd or Path.cwd())
    commit = _git("rev-parse", "HEAD", cwd=cwd)
    status = _git("status", "--porcelain", "--untracked-files=no", cwd=cwd) if commit else None
    kit_commit = _git("log", "-1", "--format=%H", "--", str(kit_path), cwd=cwd) if commit and kit_path else None
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None,
            "kit_git_commit": kit_commit or None, "ci_run_url": ci_run_url()}
