"""The Invoke front end with Invoke's real parser: per-task help, short flags, core flags after a task name, a
variadic triage path, --dry, --only/--skip/--set in the manifest, BrokenPipe, the config hierarchy and the installed
`reprokit` console command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import invoke
import pytest

from reprokit.cli.program import ReprokitConfig, ReprokitProgram, TaskProgram
from reprokit.cli.tasks import ns
from reprokit.commands.tasking import SHORT_FLAGS
from tests.conftest import REPO, run_invoke

FIXTURES = REPO / "tests" / "fixtures" / "logs"


def run_program(capsys, *argv: str, program: invoke.Program | None = None) -> tuple[int, str, str]:
    """The `invoke` binary's program as tasks.py makes it (a TaskProgram), in this process."""
    program = program or TaskProgram(namespace=ns, name="invoke", binary="invoke")
    try:
        program.run(["invoke", *argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(ns.task_names))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_task_explains_every_flag(capsys, name, flag):
    code, out, err = run_program(capsys, name, flag)
    assert (code, err) == (0, "")
    assert out.startswith(f"Usage: invoke {name} [--options]")
    for argument in ns[name].get_arguments():  # every flag's line carries its help text
        flag = argument.names[0]
        assert re.search(rf"--{flag}(=\w+)?\s{{2,}}\S", out), f"{name} --{flag} has no help"


def test_short_flags_come_from_one_table_and_none_is_h():
    for name in ns.task_names:
        for argument in ns[name].get_arguments():
            long_name, *short = argument.names
            assert "h" not in short, f"{name}: -h must stay --help"
            assert short == ([SHORT_FLAGS[long_name]] if long_name in SHORT_FLAGS else []), (name, argument.names)


def test_core_flags_before_a_missing_positional_are_core_flags(capsys, tmp_path):
    code, out, _ = run_program(capsys, "repro", "--dry", "smem-probe", "--runs-dir", str(tmp_path / "runs"))
    assert code == 0
    assert out.splitlines()[0] == "plan of kit smem-probe (kits/smem-probe.yml), dry run: nothing is connected, run or written"
    assert not (tmp_path / "runs").exists()
    code, _, err = run_program(capsys, "triage")
    assert (code, err) == (2, "error: `invoke triage` needs at least one PATHS\nUsage: invoke triage [--options] PATHS ...\n")


@pytest.mark.parametrize(("argv", "stderr"), [
    (["repro"], "error: `reprokit repro` needs KIT\nUsage: reprokit repro [--options] KIT\n"),
    (["repro", "smem-probe", "--bogus"], "error: `reprokit repro` has no option --bogus; `reprokit repro --help` lists them\n"
                                        "Usage: reprokit repro [--options] KIT\n"),
    (["--bogus"], "error: `reprokit` has no option --bogus; `reprokit --help` lists them\n"
                  "Usage: reprokit TASK [--options] [ARGUMENTS ...]   (`reprokit --list` lists the tasks)\n"),
    (["reproo", "smem-probe"], "error: no task or argument 'reproo' for `reprokit`; `reprokit --list` lists the tasks\n"
                               "Usage: reprokit TASK [--options] [ARGUMENTS ...]   (`reprokit --list` lists the tasks)\n"),
    (["hosts", "--color", "pink"], "error: --color pink: give one of auto, always, never\n"),
])
def test_a_usage_error_is_one_line_naming_the_command_typed_then_its_usage_and_exit_2(capsys, argv, stderr):
    program = ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", config_class=ReprokitConfig)
    try:
        program.run(["/home/u/.local/bin/reprokit", *argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", stderr)


def test_a_message_names_the_program_typed(capsys, tmp_path):
    program = ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", config_class=ReprokitConfig)
    with pytest.raises(SystemExit) as done:
        program.run(["reprokit", "compare", "nosuchrun", "nosuchrun2", "--runs-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "`reprokit runs" in err and "`invoke " not in err, err


def test_repro_help_and_an_unquoted_glob_with_the_real_invoke_command():
    proc = run_invoke("repro", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: invoke repro [--options] KIT\n")
    assert "  -o STRING, --only=STRING " in proc.stdout  # a repeatable flag takes a value (Invoke shows a switch)
    logs = sorted(str(p.relative_to(REPO)) for p in FIXTURES.glob("*.log"))  # what the shell makes of logs/*.log
    proc = run_invoke("triage", *logs, "--json")
    report = json.loads(proc.stdout)
    assert [f["path"] for f in report["files"]] == logs
    assert proc.returncode == report["exit_code"] == 11  # one of them is fatal


def test_dry_run_prints_the_plan_and_touches_nothing(tmp_path):
    proc = run_invoke("--dry", "repro", "ep8-crash", "--json", "--set", "sweep.backends=[triton]", "--skip", "serve",
                      "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    [host] = plan["hosts"]
    assert [s["name"] for s in host["steps"]] == ["fingerprint", "probe", "static-smem", "sweep", "triage"]
    sweep = host["steps"][3]
    assert (sweep["runs_on"], sweep["params"]["backends"], sweep["timeout_s"]) == ("this machine natively", ["triton"], 900)
    assert plan["selection"] == {"only": [], "skip": ["serve"], "set": {"sweep": {"backends": ["triton"]}}}
    assert not (tmp_path / "runs").exists()


def test_only_and_set_are_recorded_in_the_manifest(tmp_path):
    runs = tmp_path / "from-env"
    proc = run_invoke("repro", "tile-sweep", "--only", "probe", "--set", "probe.device_indices=[0]", "--json", "--quiet",
                      env={"INVOKE_REPROKIT_RUNS_DIR": str(runs)})  # the runs dir from the environment (Invoke's config)
    result = json.loads(proc.stdout)
    manifest = json.loads((Path(result["run_dir"]) / "manifest.json").read_text())
    assert Path(result["run_dir"]).parent == runs
    assert manifest["selection"] == {"only": ["probe"], "skip": [], "set": {"probe": {"device_indices": [0]}}}
    assert [s["name"] for s in manifest["steps"]] == ["probe"]
    params = json.loads((Path(result["run_dir"]) / "steps" / "probe" / "params.json").read_text())
    assert params["device_indices"] == [0]
    assert proc.returncode == 3  # no GPU here: INCONCLUSIVE


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "probe.device_index=0"], "error: --set probe.*: unknown parameter 'device_index' in 'with' of step 'probe'"
                                        " (smem-probe); known parameters: device_indices"),
    (["--set", "probe"], "error: --set 'probe': write STEP.KEY=VALUE, e.g. --set sweep.backends=[triton]"),
    (["--only", "prob"], "error: --only prob: kit 'smem-probe' has no such step (did you mean 'probe'?); steps: probe"),
])
def test_bad_selection_is_one_line_and_exit_2(tmp_path, args, message):
    proc = run_invoke("repro", "smem-probe", *args, "--runs-dir", str(tmp_path))
    assert (proc.returncode, proc.stderr.strip(), list(tmp_path.iterdir())) == (2, message, [])


@pytest.mark.parametrize("argv", [["triage", *map(str, FIXTURES.glob("*")), "--json"], ["repro", "--help"], ["kits"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(argv):
    proc = subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), *argv], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # `| head` that has read enough
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err.decode()) == (141, "")


def test_user_config_file_names_the_kits_dir(tmp_path):
    kits = tmp_path / "my-kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text())
    (tmp_path / ".invoke.yaml").write_text(f"reprokit:\n  kits_dir: {kits}\n")
    proc = run_invoke("kits", "--json", env={"HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    listed = {k["kit"]: (k["source"], k["path"]) for k in json.loads(proc.stdout)["kits"]}
    assert listed["smem-probe"] == ("config", str(kits / "smem-probe.yml"))  # the config's layer wins over ./kits
    shipped = sorted(p.stem for p in (REPO / "kits").glob("*.yml"))
    assert sorted(listed) == shipped and {listed[k][0] for k in shipped if k != "smem-probe"} == {"project"}


def test_reprokit_program_reads_the_project_file_where_it_runs(capsys, tmp_path, monkeypatch):
    (tmp_path / "kits").mkdir()
    (tmp_path / "kits" / "tile-sweep.yml").write_text((REPO / "kits" / "tile-sweep.yml").read_text())
    (tmp_path / "reprokit.yaml").write_text("reprokit:\n  kits_dir: kits\n")
    monkeypatch.chdir(tmp_path)
    program = ReprokitProgram(namespace=ns, name="reprokit", binary="reprokit", config_class=ReprokitConfig)
    code, out, _ = run_program(capsys, "kits", "--json", program=program)
    listed = {k["kit"]: (k["source"], k["path"]) for k in json.loads(out)["kits"]}
    assert code == 0 and listed["tile-sweep"] == ("config", "kits/tile-sweep.yml")  # ./kits, named by the config key
    assert {source for name, (source, _) in listed.items() if name != "tile-sweep"} == {"built-in"}


@pytest.mark.network
def test_the_installed_console_command_runs_the_same_tasks(tmp_path):
    """`pipx install .` in small: pip installs the package and its `reprokit` script; it runs outside the repository."""
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                          "--target", str(target), str(REPO)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr[-2000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target))
    listed = subprocess.run([str(target / "bin" / "reprokit"), "--list"], cwd=work, env=env, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split()[0] for line in listed.stdout.splitlines()[2:] if line.startswith("  ") and line.split()
                  and not line.startswith("   ")) == sorted(name for name in ns.task_names
                                                            if not getattr(ns.tasks[name], "for_developers", False))
    helped = subprocess.run([str(target / "bin" / "reprokit"), "repro", "--help"], cwd=work, env=env, capture_output=True,
                            text=True)
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: reprokit repro [--options] KIT\n")


def test_hosts_of_an_ini_inventory_as_json_with_the_warning_on_stderr(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nrtx1 ansible_host=10.1.0.11 gpu_arch=sm120 gpu_cuont=8 ansible_become_user=ops\n")
    proc = run_invoke("hosts", "-i", str(path), "--json")
    assert proc.returncode == 0
    assert [(h["name"], h["gpu_arch"], h["groups"]) for h in json.loads(proc.stdout)["hosts"]] == [
        ("local", None, []), ("rtx1", "sm120", ["gpu"])]
    assert proc.stderr == (f"warning: {path}:2: host 'rtx1': variable 'gpu_cuont' is not reprokit's (did you mean"
                           " 'gpu_count'?); it is passed to Ansible as it is\n")


@pytest.mark.network
def test_check_pins_as_json():
    proc = run_invoke("check-pins", "-k", "smem-probe", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"kit": "smem-probe", "path": "kits/smem-probe.yml", "checked": ["torch 2.9.1"],
                                        "problems": []}]


@pytest.mark.parametrize("argv", [["unlock", "-H", "local"], ["lock"], ["build", "-k", "ep8-crash"],
                                  ["collect", "runs/none"]])
def test_tasks_that_change_things_do_nothing_under_dry(capsys, argv):
    code, out, err = run_program(capsys, "--dry", *argv)
    assert (code, out) == (2, "")
    assert err.strip() == f"error: `invoke {argv[0]}` has no --dry plan; nothing was done (run it without --dry)"


def test_dry_plan_of_a_remote_host_shows_the_route_the_ssh_config_gives(capsys, tmp_path):
    (tmp_path / "ssh_config").write_text("Host gpu\n  HostName 10.1.0.11\n  User ops\n  Port 2222\n  ProxyJump admin@bastion:2200\n"
                                         "Host bastion\n  HostName 192.0.2.1\n")
    (tmp_path / "hosts.ini").write_text("[blackwell]\ntarget ansible_host=gpu runtime=native gpu_arch=sm120\n")
    code, out, _ = run_program(capsys, "--dry", "probe", "-H", "target", "-i", str(tmp_path / "hosts.ini"), "--ssh-config",
                               str(tmp_path / "ssh_config"), "-j", "-r", str(tmp_path / "runs"))
    assert code == 0
    [host] = json.loads(out)["hosts"]
    assert host["uploads"][0].startswith("workload code (reprokit/workloads, ")
    probe = host["steps"][1]
    assert probe["runs_on"] == "target (ops@10.1.0.11:2222 via admin@192.0.2.1:2200) natively"
    assert (probe["uploads"], probe["pulls_back"]) == (["params.json"], ["steps/probe/ (**)"])
    assert not (tmp_path / "runs").exists()


def test_limit_is_matched_by_ansible_for_a_kit_run(capsys, tmp_path):
    (tmp_path / "hosts.ini").write_text("[blackwell]\nrtx-[01:04] runtime=native\n")
    code, out, _ = run_program(capsys, "--dry", "probe", "-l", "blackwell:!rtx-03", "-i", str(tmp_path / "hosts.ini"), "-j")
    assert code == 0 and [h["host"] for h in json.loads(out)["hosts"]] == ["rtx-01", "rtx-02", "rtx-04"]
    code, _, err = run_program(capsys, "probe", "-l", "rtx-0*", "-H", "rtx-01", "-i", str(tmp_path / "hosts.ini"))
    assert (code, err.strip()) == (2, "error: give one of --host, --group or --limit, not --host and --limit")
