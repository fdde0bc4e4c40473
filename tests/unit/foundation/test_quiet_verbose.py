"""--quiet and --verbose mean the same in every task (reprokit/output/verbosity.py), through Invoke's real parser and the real
`invoke` command: what each level prints, exactly, for a run and for a task that only prints its result."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from reprokit.cli.program import TaskProgram
from reprokit.cli.tasks import ns
from reprokit.commands.console import printers
from reprokit.output import verbosity
from reprokit.workloads.static_smem.wheel import default_cache_dir
from tests.conftest import REPO, run_invoke

LOG = REPO / "tests" / "fixtures" / "logs" / "sglang-tp1-ready-clean-crlf.log"
RUN_ID = re.compile(r"\d{8}T\d{6}Z-smem-probe-local-[0-9a-f]{4}")


@pytest.mark.parametrize("name", sorted(ns.task_names))
def test_every_task_takes_both_flags_with_one_meaning(name: str) -> None:
    flags = {a.name: (a.names, a.help) for a in ns[name].get_arguments() if a.name in ("quiet", "verbose")}
    assert flags == {"quiet": (("quiet", "q"), verbosity.HELP["quiet"]),
                     "verbose": (("verbose", "v"), verbosity.HELP["verbose"])}


@pytest.mark.parametrize("argv", [["repro", "smem-probe"], ["triage", str(LOG)], ["kits"]])
def test_quiet_and_verbose_at_once_is_a_usage_error(capsys, argv: list[str], tmp_path: Path) -> None:
    program = TaskProgram(namespace=ns, name="invoke", binary="invoke")
    with pytest.raises(SystemExit) as exit_info:
        program.run(["invoke", *argv, "-q", "-v"])
    assert exit_info.value.code == 2
    assert capsys.readouterr() == ("", "error: give --quiet or --verbose, not both\n")


def repro_at(level: list[str], runs: Path) -> tuple[int, list[str], list[str], Path]:
    """A local smem-probe run (no GPU here: INCONCLUSIVE), its output with the run's directory and durations named."""
    done = run_invoke("repro", "smem-probe", "--runs-dir", str(runs), *level)
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]

    short = run_dir.name.rsplit("-", 1)[-1]  # the run id people type, in the headline's lines

    def same(text: str) -> list[str]:
        return [re.sub(r" in [0-9.]+ s", " in T s", RUN_ID.sub("RUN", line.replace(str(runs), "RUNS")))
                .replace(f"-r {short}`", "-r ID`").replace(f"(run id {short})", "(run id ID)") for line in text.splitlines()]
    return done.returncode, same(done.stdout), same(done.stderr), run_dir


def test_a_run_at_each_level(tmp_path: Path) -> None:
    (code_q, out_q, err_q, _) = repro_at(["--quiet"], tmp_path / "q")
    (code_n, out_n, err_n, _) = repro_at([], tmp_path / "n")
    (code_v, out_v, err_v, run_v) = repro_at(["-v"], tmp_path / "v")
    # the result is the same at every level; only what is said while it works differs
    assert code_q == code_n == code_v
    assert out_q == out_n == out_v and out_n[-2:] == ["record: RUNS/RUN (run id ID)", "report: RUNS/RUN/report.html"]
    assert err_q == []
    steps = [line for line in err_n if line.startswith(("run ", "["))]  # (rich wraps the long lines at 140)
    assert steps == ["run RUN: kit smem-probe on host local (native); pins: cuda 12.9.1, torch 2.9.1",
                     "[1/2] fingerprint ...", "[2/2] probe (smem-probe) ..."]
    # the workload's own line only repeats why there is no GPU, which the fingerprint said: it is left out
    assert sum(line.startswith("      | smem-probe: ") for line in err_n) == 0
    # the local host runs its steps as any host does: the shipped code (named by its digest) first on the path
    debug = [re.sub(r"/code/[0-9a-f]{16}[^ ]*", "/code/CODE", line) for line in err_v if line.startswith("debug: ")]
    # ... and this machine's own cache, warm across runs
    env = f"env PYTHONPATH=RUNS/.hosts/local/code/CODE PYTHONUNBUFFERED=1 REPROKIT_CACHE={default_cache_dir()}"
    assert debug == [
        f"debug: host local: step fingerprint: {env} {sys.executable} -m reprokit.workloads.fingerprint"
        " --params params.json --out-dir .",
        f"debug: host local: step probe: {env} {sys.executable} -m reprokit.workloads.smem_probe"
        " --params params.json --out-dir ."]
    assert [line for line in err_v if not line.startswith("debug: ")] == err_n
    assert run_v.parent == tmp_path / "v"


@pytest.mark.parametrize("argv", [["triage", str(LOG)], ["kits"], ["hosts", "--inventory", "inventory.yml"]])
def test_a_task_that_prints_only_its_result_prints_it_at_every_level(argv: list[str]) -> None:
    runs = [run_invoke(*argv, *level) for level in (["-q"], [], ["--verbose"])]
    assert [r.returncode for r in runs] == [runs[1].returncode] * 3
    assert [r.stdout for r in runs] == [runs[1].stdout] * 3 and runs[1].stdout
    assert [r.stderr for r in runs] == ["", "", ""]


@pytest.mark.parametrize(("level", "said"), [
    (verbosity.Level.QUIET, ["warning: added the host key of 10.0.0.1"]),
    (verbosity.Level.NORMAL, ["[1/2] probe ...", "warning: added the host key of 10.0.0.1", "      | probe: a line",
                              "      static-smem compile 1/3 (33%)", "      done"]),
    (verbosity.Level.VERBOSE, ["[1/2] probe ...", "warning: added the host key of 10.0.0.1", "      | probe: a line",
                               "      static-smem compile 1/3 (33%)", "      | progress: static-smem compile 1/3: a.cu",
                               "      done"]),
])
def test_the_printers_at_each_level(capsys, level: verbosity.Level, said: list[str]) -> None:
    verbosity.set_level(level)
    try:
        say, stream = printers(as_json=False)
        say("[1/2] probe ...")
        say("warning: added the host key of 10.0.0.1")
        stream("probe: a line")
        stream("progress: static-smem compile 1/3: a.cu")  # a bar; in a log, a line per tenth
        say("      done")
    finally:
        verbosity.set_level(verbosity.Level.NORMAL)
    assert capsys.readouterr().err.splitlines() == said
