"""Every output reprokit derives from the kept run records, as sha256: the byte-identical baseline of a refactor.

The kept records are the run records in the tree (``evidence/**/manifest.json``, and any under ``tests/fixtures``):
real runs as the kit wrote them. For each one this renders what a reader sees of it — report.md and report.html
(re-rendered into a copy), the manifest and verdict.json read and written again, the judge's verdict of its steps
under today's kit, the verdict lines and ``--json`` object ``invoke repro`` prints, ``invoke check-record`` (text and
``--json``), ``invoke report --upstream`` — and for each directory of them ``invoke runs`` (table, ``--json``,
``--html``) and ``invoke summary``, and ``invoke compare`` (Markdown and ``--json``) of every ordered pair.

``kept_outputs.json`` holds the hashes taken on the code before a change; ``test_kept_outputs.py`` asserts them
after. A change meant to alter an output regenerates the file, and says so in its commit:

    PYTHONPATH=$PWD .venv/bin/python tests/unit/records/kept_outputs.py --write
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
BASELINE = Path(__file__).with_name("kept_outputs.json")
TMP = "<tmp>"
STEP_ERRORS = ("timeout", "error", "bad_params")  # the statuses of a step that failed itself, as on disk
REPO_MARK = "<repo>"  # where the checkout is does not matter


def kept_records() -> list[Path]:
    """The run records in the tree, relative to the repository, in path order."""
    found = [*REPO.glob("evidence/**/manifest.json"), *REPO.glob("tests/fixtures/**/manifest.json")]
    return sorted(path.parent.relative_to(REPO) for path in found)


@contextlib.contextmanager
def _in_repo() -> Iterator[None]:
    """Paths in the outputs are the ones a user in the repository types (``evidence/...``), not this machine's."""
    before = os.getcwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(before)


def _printed(call: Callable[[], object], stderr: bool = True) -> str:
    """What ``call`` prints on stdout and stderr, with its return value (an exit code) or its error's one line.

    ``stderr=False`` for a command whose stderr is a log of this machine (the static analysis's cache path).
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            ended = f"returned {call()!r}"
        except Exception as exc:  # noqa: BLE001 — an error is an output too (its class and line)
            ended = f"raised {type(exc).__name__}: {exc}"
    said = f"\n--- stderr\n{err.getvalue()}" if stderr else ""
    return f"{out.getvalue()}{said}\n--- {ended}\n"


def _record_outputs(record: Path, copy: Path) -> dict[str, str]:
    from reprokit.commands.fix import write_upstream_report
    from reprokit.commands.records import check_record
    from reprokit.commands.run import _print_verdict, run_exit_code
    from reprokit.config.kit import load_kit_file
    from reprokit.report.judge import judge
    try:
        from reprokit.phases.outcome import RunOutcome
    except ImportError:  # the code before the run's phases (the baseline was taken on it)
        from reprokit.runner import RunOutcome  # type: ignore[no-redef]
    from reprokit.records.models import Manifest, Verdict
    from reprokit.records.run_dir import load_manifest, load_verdict
    from reprokit.report.html import write_html_report
    from reprokit.report.markdown import write_report

    out: dict[str, str] = {}
    manifest = load_manifest(copy)
    verdict = load_verdict(copy)
    steps = {e.name: e for e in manifest.steps}
    for e in steps.values():
        if e.result_file and (copy / e.result_file).is_file():
            e.result = json.loads((copy / e.result_file).read_text())
    out["manifest.json round trip"] = json.dumps(Manifest.from_json(manifest.to_json(), "m").to_json(), indent=2)
    if verdict is not None:
        out["verdict.json round trip"] = json.dumps(Verdict.from_json(verdict.to_json(), "v").to_json(), indent=2)
        write_report(copy, manifest, verdict, steps)
        write_html_report(copy, manifest, verdict, steps)
        out["report.md"] = (copy / "report.md").read_text()
        out["report.html"] = (copy / "report.html").read_text()
        outcome = RunOutcome(copy, verdict, "judged", step_errors=any(e.status in STEP_ERRORS for e in steps.values()))
        out["repro verdict lines"] = _printed(lambda: _print_verdict(manifest.kit_name, manifest.host_name, outcome))
        out["repro --json"] = json.dumps({"run_dir": str(copy), "exit_code": int(run_exit_code(outcome)),
                                          **outcome.to_json()}, indent=2)

    def judged() -> str:
        kit = load_kit_file(REPO / manifest.kit.path)
        return json.dumps(judge(kit, steps, manifest.fingerprint).to_json(), indent=2)
    out["judge under today's kit"] = _printed(lambda: print(judged()))
    out["check-record"] = _printed(lambda: check_record(str(record)))
    out["check-record --json"] = _printed(lambda: check_record(str(record), as_json=True))
    out["report --upstream"] = _printed(lambda: write_upstream_report(str(record), None), stderr=False)
    return out


def _directory_outputs(directory: Path, scratch: Path) -> dict[str, str]:
    from reprokit.commands.records import runs_command, summary

    html = scratch / f"{directory.as_posix().replace('/', '_')}.html"
    out = {
        "runs": _printed(lambda: runs_command(str(directory))),
        "runs --json": _printed(lambda: runs_command(str(directory), as_json=True)),
        "summary": _printed(lambda: summary(str(directory), None)),
    }
    out["runs --html (console)"] = _printed(lambda: runs_command(str(directory), html=str(html)))
    out["runs --html (index)"] = html.read_text() if html.is_file() else "(none)"
    return out


def _pair_outputs(a: Path, b: Path) -> dict[str, str]:
    from reprokit.commands.records import compare_command

    return {"compare": _printed(lambda: compare_command(str(a), str(b), [])),
            "compare --json": _printed(lambda: compare_command(str(a), str(b), [], as_json=True))}


def outputs() -> dict[str, str]:
    """Every output, named ``<record or directory or pair> :: <what>``, as text with the scratch path as ``<tmp>``
    and the checkout, seen from the scratch directory, as ``<repo>``."""
    records = kept_records()
    texts: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="kept-outputs-") as scratch_dir, _in_repo():
        scratch = Path(scratch_dir)
        for record in records:
            copy = scratch / "records" / record
            shutil.copytree(REPO / record, copy)
            for what, text in _record_outputs(record, copy).items():
                texts[f"{record} :: {what}"] = text
        for directory in sorted({r.parent for r in records} | {Path("evidence")}):
            for what, text in _directory_outputs(directory, scratch).items():
                texts[f"{directory}/ :: {what}"] = text
        for a in records:
            for b in records:
                if a != b:
                    for what, text in _pair_outputs(a, b).items():
                        texts[f"{a} vs {b} :: {what}"] = text
        repo_from_scratch = os.path.relpath(REPO, scratch)  # the runs index links its records relatively
        return {name: text.replace(repo_from_scratch, REPO_MARK).replace(str(scratch), TMP) for name, text in texts.items()}


def hashes() -> dict[str, str]:
    from reprokit.commands import console

    console.set_program_name("invoke")  # the outputs as `invoke` prints them, whichever program ran in this process before
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in outputs().items()}


def baseline() -> dict[str, object]:
    return json.loads(BASELINE.read_text())


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: kept_outputs.py --write   (regenerates kept_outputs.json from the code as it is)")
    taken = hashes()
    BASELINE.write_text(json.dumps({"records": [str(r) for r in kept_records()], "outputs": len(taken),
                                    "sha256": taken}, indent=1, sort_keys=True) + "\n")
    print(f"{len(kept_records())} records, {len(taken)} outputs -> {BASELINE.relative_to(REPO)}")
